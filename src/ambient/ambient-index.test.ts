import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { security, workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import type {
  AuthorizationPolicy,
  gatewayapi,
  PeerAuthentication,
  ServiceEntry,
  WorkloadEntry,
} from "../config/types/index.ts";
import { StaticCollection } from "../krt/index.ts";
import { AmbientIndex } from "./ambient-index.ts";
import { ipAddressBytes } from "./ip-bytes.ts";
import { ipString } from "./model.ts";

const keyOf = (o: ConfigObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

function pod(
  name: string,
  labels: Record<string, string>,
  ip: string,
  extra: Partial<ConfigObject> = {},
): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "ns", labels, ...(extra.metadata ?? {}) },
    spec: {
      serviceAccountName: "app",
      nodeName: "node-1",
      containers: [{ name: "app", ports: [{ name: "web", containerPort: 8080, protocol: "TCP" }] }],
    },
    status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: "True" }], ...(extra.status ?? {}) },
  } as ConfigObject;
}

function service(name: string, spec: Record<string, unknown>): ConfigObject {
  return { apiVersion: "v1", kind: "Service", metadata: { name, namespace: "ns" }, spec } as ConfigObject;
}

function setup(trustDomain = "cluster.local", dryRunPolicies = false, status = false, allowFromWaypoint = false) {
  const pods = new StaticCollection<ConfigObject>([], { keyOf });
  const authorizationPolicies = new StaticCollection<AuthorizationPolicy>([], { keyOf });
  const peerAuthentications = new StaticCollection<PeerAuthentication>([], { keyOf });
  const services = new StaticCollection<ConfigObject>([], { keyOf });
  const serviceEntries = new StaticCollection<ServiceEntry>([], { keyOf });
  const workloadEntries = new StaticCollection<WorkloadEntry>([], { keyOf });
  const namespaces = new StaticCollection<ConfigObject>(
    [
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "istio-system", labels: { "topology.istio.io/network": "net1" } },
      },
    ],
    { keyOf },
  );
  const nodes = new StaticCollection<ConfigObject>(
    [
      {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name: "node-1",
          labels: { "topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "z1" },
        },
      },
    ],
    { keyOf },
  );
  const gateways = new StaticCollection<gatewayapi.Gateway>([], { keyOf });
  const gatewayClasses = new StaticCollection<ConfigObject>([], { keyOf });
  const index = new AmbientIndex(
    {
      pods,
      services,
      serviceEntries,
      workloadEntries,
      namespaces,
      nodes,
      authorizationPolicies,
      peerAuthentications,
      gateways,
      gatewayClasses,
    },
    {
      clusterId: "Kubernetes",
      domainSuffix: "cluster.local",
      systemNamespace: "istio-system",
      trustDomain,
      rootNamespace: () => "istio-system",
      dryRunPolicies,
      allowFromWaypoint,
      status,
    },
  );
  const changes: string[][] = [];
  index.onAddressesChanged((names) => changes.push([...names].sort()));
  const policyChanges: string[][] = [];
  index.onPoliciesChanged((names) => policyChanges.push([...names].sort()));
  return {
    pods,
    services,
    serviceEntries,
    workloadEntries,
    namespaces,
    gateways,
    gatewayClasses,
    authorizationPolicies,
    peerAuthentications,
    index,
    changes,
    policyChanges,
  };
}

const decode = (info: { resource: { value: Uint8Array } }) =>
  fromBinary(workloadapi.AddressSchema, info.resource.value);
const UID = "Kubernetes//Pod/ns/app-0";
const SVC = "ns/app.ns.svc.cluster.local";

describe("ambient index", () => {
  test("a Pod is a workload and a Service a service, each found by name, by address, and the service with its workloads", () => {
    const { pods, services, index } = setup();
    services.upsert(
      service("app", {
        selector: { app: "app" },
        clusterIP: "10.96.0.10",
        clusterIPs: ["10.96.0.10"],
        ipFamilies: ["IPv4"],
        ports: [
          { name: "http", port: 80, targetPort: "web" },
          { name: "grpc", port: 90, targetPort: 9090 },
          { name: "tcp-gone", port: 70, targetPort: "missing" },
        ],
      }),
    );
    pods.upsert(pod("app-0", { app: "app", version: "v1" }, "10.244.0.5"));
    const workload = index.lookup(UID)[0];
    assert.ok(workload);
    const address = decode(workload);
    assert.equal(address.type.case, "workload");
    const w = address.type.value as workloadapi.Workload;
    assert.equal(w.uid, UID);
    assert.deepEqual([...(w.addresses[0] ?? [])], [10, 244, 0, 5]);
    assert.equal(w.network, "net1");
    assert.equal(w.serviceAccount, "app");
    assert.equal(w.node, "node-1");
    assert.equal(w.canonicalName, "app");
    assert.equal(w.canonicalRevision, "v1");
    assert.equal(w.workloadName, "app-0");
    assert.equal(w.trustDomain, "", "the default trust domain is not sent");
    assert.equal(w.tunnelProtocol, workloadapi.TunnelProtocol.NONE);
    assert.equal(w.status, workloadapi.WorkloadStatus.HEALTHY);
    assert.deepEqual({ region: w.locality?.region, zone: w.locality?.zone }, { region: "r1", zone: "z1" });
    // The named target port is the container's; a name the Pod lacks leaves that port out.
    assert.deepEqual(
      w.services[SVC]?.ports.map((p) => [p.servicePort, p.targetPort]),
      [
        [80, 8080],
        [90, 9090],
      ],
    );
    assert.deepEqual(
      index.lookup("net1/10.244.0.5").map((i) => i.name),
      [UID],
    );
    assert.deepEqual(
      index.lookup(SVC).map((i) => i.name),
      [SVC, UID],
    );
    assert.deepEqual(
      index.lookup("net1/10.96.0.10").map((i) => i.name),
      [SVC, UID],
    );
    const s = decode(index.lookup(SVC)[0] as never).type.value as workloadapi.Service;
    assert.equal(s.hostname, "app.ns.svc.cluster.local");
    assert.equal(s.canonical, true);
    assert.equal(s.ipFamilies, workloadapi.IPFamilies.IPV4_ONLY);
    assert.deepEqual(
      s.ports.map((p) => [p.servicePort, p.targetPort, p.appProtocol]),
      [
        [80, 0, workloadapi.AppProtocol.HTTP11],
        [90, 9090, workloadapi.AppProtocol.GRPC],
        [70, 0, workloadapi.AppProtocol.TCP],
      ],
    );
    assert.deepEqual(index.addressInformation([UID, "ns/gone"]).missing, ["ns/gone"]);
  });

  test("changes are told by resource name: a Pod added, relabelled out of its Service, deleted; a Service changed", () => {
    const { pods, services, changes } = setup();
    services.upsert(
      service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80, targetPort: 80 }] }),
    );
    assert.deepEqual(changes, [[SVC]]);
    pods.upsert(pod("app-0", { app: "app" }, "10.244.0.5"));
    pods.upsert(pod("app-0", { app: "other" }, "10.244.0.5"));
    // The same Pod again sends the same bytes: nothing to tell.
    pods.upsert(pod("app-0", { app: "other" }, "10.244.0.5"));
    services.upsert(
      service("app", { selector: { app: "other" }, clusterIP: "10.96.0.10", ports: [{ port: 80, targetPort: 80 }] }),
    );
    pods.delete("ns/app-0");
    assert.deepEqual(changes, [[SVC], [UID], [UID], [SVC], [UID], [UID]]);
  });

  test("left out: a Pod without an IP or terminated, an ExternalName or headless-address-less Service keeps no VIP", () => {
    const { pods, services, index } = setup();
    pods.upsert(pod("pending", {}, ""), pod("done", {}, "10.244.0.9", { status: { phase: "Succeeded" } } as never));
    services.upsert(
      service("external", { type: "ExternalName", externalName: "example.com" }),
      service("headless", { clusterIP: "None", ports: [{ port: 80 }] }),
    );
    assert.deepEqual(
      index.all().map((i) => i.name),
      ["ns/headless.ns.svc.cluster.local"],
    );
    const headless = decode(index.all()[0] as never).type.value as workloadapi.Service;
    assert.deepEqual(headless.addresses, []);
  });

  test("HBONE for a Pod enrolled by the CNI; the trust domain when not cluster.local; unready or deleting is unhealthy", () => {
    const { pods, index } = setup("example.org");
    pods.upsert(
      pod("app-0", {}, "10.244.0.5", {
        metadata: {
          annotations: { "ambient.istio.io/redirection": "enabled" },
          deletionTimestamp: "2026-12-07T00:00:00Z",
        },
      } as never),
    );
    const w = decode(index.lookup(UID)[0] as never).type.value as workloadapi.Workload;
    assert.equal(w.tunnelProtocol, workloadapi.TunnelProtocol.HBONE);
    assert.equal(w.nativeTunnel, false);
    assert.equal(w.trustDomain, "example.org");
    assert.equal(w.status, workloadapi.WorkloadStatus.UNHEALTHY);
  });

  test("a new mesh trust domain sends every workload again with it", () => {
    const { pods, index, changes } = setup();
    pods.upsert(pod("app-0", {}, "10.244.0.5"));
    changes.length = 0;
    index.setTrustDomain("example.org");
    assert.deepEqual(changes, [[UID]]);
    const w = decode(index.lookup(UID)[0] as never).type.value as workloadapi.Workload;
    assert.equal(w.trustDomain, "example.org");
  });

  test("IP text from bytes, IPv6 in Go's form", () => {
    for (const ip of ["10.0.0.1", "fd00::1", "2001:db8::", "::", "fe80::1:0:0:1", "1:2:3:4:5:6:7:8"]) {
      const bytes = ipAddressBytes(ip);
      assert.ok(bytes, ip);
      assert.equal(ipString(bytes), ip);
    }
  });
});

/** A security.istio.io object; `metadata` adds to its name and namespace. */
function securityObject<Spec>(
  kind: string,
  namespace: string,
  name: string,
  spec: Spec,
  metadata: Partial<ConfigObject["metadata"]> = {},
): ConfigObject<Spec> {
  return { apiVersion: "security.istio.io/v1", kind, metadata: { name, namespace, ...metadata }, spec };
}

const authorizationPolicy = (
  namespace: string,
  name: string,
  spec: NonNullable<AuthorizationPolicy["spec"]>,
  annotations: Record<string, string> = {},
): AuthorizationPolicy => securityObject("AuthorizationPolicy", namespace, name, spec, { annotations });

const peerAuthentication = (
  namespace: string,
  name: string,
  spec: NonNullable<PeerAuthentication["spec"]>,
  creationTimestamp = "2026-01-01T00:00:00Z",
): PeerAuthentication => securityObject("PeerAuthentication", namespace, name, spec, { creationTimestamp });

const policiesOf = (index: AmbientIndex, uid = UID) =>
  (decode(index.lookup(uid)[0] as never).type.value as workloadapi.Workload).authorizationPolicies;
const STATIC_STRICT = "istio-system/istio_converted_static_strict";
const serviceEntry = (
  name: string,
  spec: Record<string, unknown>,
  metadata: Partial<ConfigObject["metadata"]> = {},
  namespace = "ns",
): ServiceEntry =>
  ({
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name, namespace, creationTimestamp: "2026-01-01T00:00:00Z", ...metadata },
    spec,
  }) as unknown as ServiceEntry;
const workloadEntry = (name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) =>
  ({
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name, namespace: "ns", labels },
    spec,
  }) as WorkloadEntry;
const waypoint = (name: string, labels: Record<string, string> = {}, from = "Same"): gatewayapi.Gateway =>
  ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name, namespace: "ns", labels },
    spec: {
      gatewayClassName: "istio-waypoint",
      listeners: [{ name: "mesh", port: 15008, protocol: "HBONE", allowedRoutes: { namespaces: { from } } }],
    },
    status: { addresses: [{ type: "Hostname", value: `${name}.ns.svc.cluster.local` }] },
  }) as gatewayapi.Gateway;

const allow = { rules: [{ from: [{ source: { namespaces: ["shop"] } }] }] };

describe("ambient index: waypoints", () => {
  const hostnameOf = (address: workloadapi.GatewayAddress | undefined) =>
    address?.destination.case === "hostname" ? address.destination.value.hostname : undefined;

  test("a Service labelled with a service waypoint goes through it, a workload through a workload waypoint; none opts out", () => {
    const { pods, services, gateways, index, changes } = setup();
    services.upsert(
      service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80, targetPort: 80 }] }),
    );
    pods.upsert(pod("app-0", { app: "app", "istio.io/use-waypoint": "wl" }, "10.244.0.5"));
    services.upsert({
      ...service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80, targetPort: 80 }] }),
      metadata: {
        name: "app",
        namespace: "ns",
        labels: { "istio.io/use-waypoint": "svc", "istio.io/ingress-use-waypoint": "true" },
      },
    });
    const serviceOf = () => decode(index.lookup(SVC)[0] as never).type.value as workloadapi.Service;
    const workloadOf = () => decode(index.lookup(UID)[0] as never).type.value as workloadapi.Workload;
    assert.equal(serviceOf().waypoint, undefined, "no waypoint until its Gateway has an address");
    changes.length = 0;
    gateways.upsert(waypoint("svc"), waypoint("wl", { "istio.io/waypoint-for": "workload" }));
    assert.equal(hostnameOf(serviceOf().waypoint), "svc.ns.svc.cluster.local");
    assert.equal(serviceOf().waypoint?.hboneMtlsPort, 15008);
    assert.equal(serviceOf().ingressUseWaypoint, true);
    assert.equal(hostnameOf(workloadOf().waypoint), "wl.ns.svc.cluster.local");
    assert.deepEqual(changes.flat().sort(), [UID, SVC]);
    // A service waypoint takes no workload traffic.
    pods.upsert(pod("app-0", { app: "app", "istio.io/use-waypoint": "svc" }, "10.244.0.5"));
    assert.equal(workloadOf().waypoint, undefined);
    pods.upsert(pod("app-0", { app: "app", "istio.io/use-waypoint": "none" }, "10.244.0.5"));
    assert.equal(workloadOf().waypoint, undefined);
  });

  test("a namespace's waypoint applies to its Services; one in another namespace only if its listener allows them", () => {
    const { services, namespaces, gateways, index } = setup();
    namespaces.upsert({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ns", labels: { "istio.io/use-waypoint": "shared" } },
    });
    services.upsert(service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80 }] }));
    gateways.upsert(waypoint("shared"));
    const serviceOf = () => decode(index.lookup(SVC)[0] as never).type.value as workloadapi.Service;
    assert.equal(hostnameOf(serviceOf().waypoint), "shared.ns.svc.cluster.local");
    assert.equal(serviceOf().ingressUseWaypoint, false);
    services.upsert({
      ...service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80 }] }),
      metadata: {
        name: "app",
        namespace: "ns",
        labels: { "istio.io/use-waypoint": "shared", "istio.io/use-waypoint-namespace": "infra" },
      },
    });
    assert.equal(serviceOf().waypoint, undefined, "no such waypoint in infra");
    gateways.upsert({ ...waypoint("shared"), metadata: { name: "shared", namespace: "infra" } } as gatewayapi.Gateway);
    assert.equal(serviceOf().waypoint, undefined, "infra's waypoint takes only its own namespace's traffic");
    gateways.upsert({
      ...waypoint("shared", {}, "All"),
      metadata: { name: "shared", namespace: "infra" },
    } as gatewayapi.Gateway);
    assert.equal(hostnameOf(serviceOf().waypoint), "shared.ns.svc.cluster.local");
  });
  test("a waypoint proxy's services: those naming its hostname in its namespace, or its address on its network", () => {
    const { pods, services, namespaces, gateways, index } = setup();
    namespaces.upsert({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ns", labels: { "istio.io/use-waypoint": "wp" } },
    });
    gateways.upsert(waypoint("wp"), {
      ...waypoint("byip"),
      status: { addresses: [{ type: "IPAddress", value: "10.96.9.9" }] },
    } as gatewayapi.Gateway);
    services.upsert(
      service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80 }] }),
      {
        ...service("other", { selector: { app: "other" }, clusterIP: "10.96.0.11", ports: [{ port: 80 }] }),
        metadata: { name: "other", namespace: "ns", labels: { "istio.io/use-waypoint": "byip" } },
      },
      // The waypoint's own Service, as its deployment controller makes it, is never bound to it.
      {
        ...service("wp", {
          selector: {
            "gateway.networking.k8s.io/gateway-name": "wp",
            "gateway.istio.io/managed": "istio.io-mesh-controller",
          },
          clusterIP: "10.96.0.12",
          ports: [{ port: 15008 }],
        }),
      },
    );
    const names = (key: Parameters<typeof index.servicesForWaypoint>[0]) =>
      index
        .servicesForWaypoint(key)
        .map((s) => s.name)
        .sort();
    const key = { namespace: "ns", network: "net1", hostnames: [], addresses: [] };
    assert.deepEqual(names({ ...key, hostnames: ["wp.ns.svc.cluster.local"] }), [SVC]);
    assert.deepEqual(names({ ...key, namespace: "elsewhere", hostnames: ["wp.ns.svc.cluster.local"] }), []);
    assert.deepEqual(names({ ...key, addresses: ["10.96.9.9"] }), ["ns/other.ns.svc.cluster.local"]);
    assert.deepEqual(names({ ...key, network: "net2", addresses: ["10.96.9.9"] }), []);

    // A workload takes HBONE once the CNI enrolled it in the mesh.
    pods.upsert(pod("app-0", { app: "app" }, "10.244.0.5"));
    assert.equal(index.supportsTunnel("net1", "10.244.0.5"), false);
    pods.upsert(
      pod("app-0", { app: "app" }, "10.244.0.5", {
        metadata: { name: "app-0", namespace: "ns", annotations: { "ambient.istio.io/redirection": "enabled" } },
      }),
    );
    assert.equal(index.supportsTunnel("net1", "10.244.0.5"), true);
    assert.equal(index.supportsTunnel("net2", "10.244.0.5"), false);
  });

  test("a waypoint proxy's workloads: those bound to it (a workload waypoint), oldest first, not its own pods", () => {
    const { pods, namespaces, gateways, index } = setup();
    namespaces.upsert({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ns", labels: { "istio.io/use-waypoint": "wl" } },
    });
    gateways.upsert(waypoint("wl", { "istio.io/waypoint-for": "workload" }));
    const created = (name: string, ip: string, second: number, labels: Record<string, string> = { app: name }) =>
      pod(name, labels, ip, {
        metadata: {
          name,
          namespace: "ns",
          creationTimestamp: `2026-01-01T00:00:0${second}Z`,
          annotations: { "ambient.istio.io/redirection": "enabled" },
        },
      });
    pods.upsert(
      created("young", "10.244.0.7", 5),
      created("old", "10.244.0.6", 1),
      // The waypoint's own pod is never bound to a waypoint.
      created("wl-0", "10.244.0.8", 0, {
        "gateway.networking.k8s.io/gateway-name": "wl",
        "gateway.istio.io/managed": "istio.io-mesh-controller",
      }),
    );
    const key = { namespace: "ns", network: "net1", hostnames: ["wl.ns.svc.cluster.local"], addresses: [] };
    const addresses = (k: typeof key) =>
      index.workloadsForWaypoint(k).flatMap((w) => w.workload.addresses.map((a) => ipString(a)));
    assert.deepEqual(addresses(key), ["10.244.0.6", "10.244.0.7"]);
    assert.deepEqual(addresses({ ...key, namespace: "elsewhere" }), []);
  });
});

describe("ambient index: policies", () => {
  test("a Pod references the selector policies of its namespace and the root's that select it, sorted, then its PeerAuthentication keys", () => {
    const { pods, authorizationPolicies, peerAuthentications, index } = setup();
    pods.upsert(pod("app-0", { app: "app" }, "10.244.0.5"));
    authorizationPolicies.upsert(
      authorizationPolicy("ns", "z-allow-app", { ...allow, selector: { matchLabels: { app: "app" } } }),
      authorizationPolicy("istio-system", "mesh-app", { ...allow, selector: { matchLabels: { app: "app" } } }),
      authorizationPolicy("ns", "namespace-wide", allow),
      authorizationPolicy("ns", "other-app", { ...allow, selector: { matchLabels: { app: "other" } } }),
      authorizationPolicy("elsewhere", "app", { ...allow, selector: { matchLabels: { app: "app" } } }),
      // A waypoint's policy is not ztunnel's.
      authorizationPolicy("ns", "waypoint", { ...allow, targetRefs: [{ kind: "Service", group: "", name: "app" }] }),
    );
    assert.deepEqual(policiesOf(index), ["istio-system/mesh-app", "ns/z-allow-app"]);
    peerAuthentications.upsert(peerAuthentication("istio-system", "default", { mtls: { mode: "STRICT" } }));
    assert.deepEqual(policiesOf(index), ["istio-system/mesh-app", "ns/z-allow-app", STATIC_STRICT]);
    // Every policy is sent, referenced or not; the static STRICT policy once any PeerAuthentication exists.
    assert.deepEqual(
      index
        .policyInformation()
        .map((p) => p.name)
        .sort(),
      [
        "elsewhere/app",
        "istio-system/istio_converted_static_strict",
        "istio-system/mesh-app",
        "ns/namespace-wide",
        "ns/other-app",
        "ns/z-allow-app",
      ],
    );
    assert.equal(index.policies.get("ns/namespace-wide")?.authorization.scope, security.Scope.NAMESPACE);
    assert.deepEqual(
      index.policyInformation(["ns/other-app", "ns/gone"]).map((p) => p.name),
      ["ns/other-app"],
    );
    peerAuthentications.delete("istio-system/default");
    assert.equal(index.policies.get(STATIC_STRICT), undefined);
    assert.deepEqual(policiesOf(index), ["istio-system/mesh-app", "ns/z-allow-app"]);
  });

  test("PILOT_AUTO_ALLOW_WAYPOINT_POLICY: a policy per waypoint allows its identities; workloads reference their services' waypoints', then their own", () => {
    const { pods, services, gateways, index } = setup("example.org", false, false, true);
    services.upsert({
      ...service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80, targetPort: 80 }] }),
      metadata: { name: "app", namespace: "ns", labels: { "istio.io/use-waypoint": "svc" } },
    });
    pods.upsert(pod("app-0", { app: "app", "istio.io/use-waypoint": "wl" }, "10.244.0.5"));
    gateways.upsert(waypoint("svc"), waypoint("wl", { "istio.io/waypoint-for": "workload" }));
    // No policy for a waypoint without pods (no identity to allow).
    assert.deepEqual(policiesOf(index), []);
    const instance = (name: string, gateway: string, account: string) => {
      const p = pod(name, { "gateway.networking.k8s.io/gateway-name": gateway }, `10.244.1.${name.length}`);
      return { ...p, spec: { ...(p.spec as object), serviceAccountName: account } };
    };
    pods.upsert(instance("svc-0", "svc", "svc-sa"), instance("wl-0", "wl", "wl-sa"), instance("wl-11", "wl", "wl-sa"));
    assert.deepEqual(policiesOf(index), ["ns/istio_allow_waypoint_ns_svc", "ns/istio_allow_waypoint_ns_wl"]);
    const allowed = index.policies.get("ns/istio_allow_waypoint_ns_wl")?.authorization;
    assert.equal(allowed?.action, security.Action.ALLOW);
    assert.equal(allowed?.scope, security.Scope.WORKLOAD_SELECTOR);
    // One principal per instance, as Istio lists them (two pods of one account: twice).
    assert.deepEqual(
      allowed?.groups[0]?.rules[0]?.matches[0]?.principals.map((p) => p.matchType.value),
      ["example.org/ns/ns/sa/wl-sa", "example.org/ns/ns/sa/wl-sa"],
    );
    // Off (the default): neither the policies nor the references.
    const off = setup();
    off.pods.upsert(pod("app-0", { app: "app", "istio.io/use-waypoint": "wl" }, "10.244.0.5"));
    off.pods.upsert(instance("wl-0", "wl", "wl-sa"));
    off.gateways.upsert(waypoint("wl", { "istio.io/waypoint-for": "workload" }));
    assert.deepEqual(policiesOf(off.index), []);
    assert.equal(off.index.policies.get("ns/istio_allow_waypoint_ns_wl"), undefined);
  });

  test("a workload PeerAuthentication with port exceptions: referenced in place of the static STRICT policy, and recomputed with its namespace's", () => {
    const { pods, peerAuthentications, index, policyChanges } = setup();
    pods.upsert(pod("app-0", { app: "app" }, "10.244.0.5"), pod("other-0", { app: "other" }, "10.244.0.6"));
    peerAuthentications.upsert(
      peerAuthentication("istio-system", "default", { mtls: { mode: "STRICT" } }),
      peerAuthentication("ns", "ports", {
        selector: { matchLabels: { app: "app" } },
        portLevelMtls: { "8080": { mode: "PERMISSIVE" } },
      }),
    );
    assert.deepEqual(policiesOf(index), ["ns/converted_peer_authentication_ports"]);
    assert.deepEqual(policiesOf(index, "Kubernetes//Pod/ns/other-0"), [STATIC_STRICT]);
    const converted = index.policies.get("ns/converted_peer_authentication_ports")?.authorization;
    assert.equal(converted?.groups.length, 1, "deny plaintext but on 8080");
    // A PERMISSIVE namespace policy (the oldest of two) leaves only STRICT ports to enforce: none here.
    policyChanges.length = 0;
    peerAuthentications.upsert(
      peerAuthentication("ns", "newer", { mtls: { mode: "STRICT" } }, "2026-02-01T00:00:00Z"),
      peerAuthentication("ns", "older", { mtls: { mode: "PERMISSIVE" } }, "2025-01-01T00:00:00Z"),
    );
    assert.equal(index.policies.get("ns/converted_peer_authentication_ports"), undefined);
    assert.deepEqual(policyChanges, [["ns/converted_peer_authentication_ports"]]);
    assert.deepEqual(policiesOf(index), []);
    assert.deepEqual(policiesOf(index, "Kubernetes//Pod/ns/other-0"), []);
  });

  test("a policy change recomputes only the workloads it could apply to, and is told by policy name", () => {
    const { pods, authorizationPolicies, changes, policyChanges } = setup();
    pods.upsert(pod("app-0", { app: "app" }, "10.244.0.5"), pod("other-0", { app: "other" }, "10.244.0.6"));
    changes.length = 0;
    authorizationPolicies.upsert(
      authorizationPolicy("ns", "app", { ...allow, selector: { matchLabels: { app: "app" } } }),
    );
    assert.deepEqual(changes, [[UID]]);
    assert.deepEqual(policyChanges, [["ns/app"]]);
    // A change of what the policy does, not of whom it selects, leaves the workloads alone.
    authorizationPolicies.upsert(
      authorizationPolicy("ns", "app", { action: "DENY", ...allow, selector: { matchLabels: { app: "app" } } }),
    );
    assert.deepEqual(changes, [[UID]]);
    assert.deepEqual(policyChanges, [["ns/app"], ["ns/app"]]);
    authorizationPolicies.delete("ns/app");
    assert.deepEqual(changes, [[UID], [UID]]);
    assert.deepEqual(policyChanges, [["ns/app"], ["ns/app"], ["ns/app"]]);
  });

  test("a Pod without labels is selected by no selector policy; dry-run policies only when enabled", () => {
    const off = setup();
    const on = setup("cluster.local", true);
    for (const { pods, authorizationPolicies } of [off, on]) {
      pods.upsert(pod("app-0", {}, "10.244.0.5"));
      authorizationPolicies.upsert(
        authorizationPolicy("ns", "app", { ...allow, selector: { matchLabels: { app: "app" } } }),
        authorizationPolicy("ns", "trial", allow, { "istio.io/dry-run": "true" }),
      );
    }
    assert.deepEqual(policiesOf(off.index), []);
    assert.deepEqual(
      off.index.policyInformation().map((p) => p.name),
      ["ns/app"],
    );
    assert.equal(on.index.policies.get("ns/trial")?.authorization.dryRun, true);
  });
});

describe("ambient index: ServiceEntries and WorkloadEntries", () => {
  const serviceOf = (index: AmbientIndex, name: string) =>
    decode(index.services.get(name) as never).type.value as workloadapi.Service;
  const workloadOf = (index: AmbientIndex, uid: string) =>
    decode(index.workloads.get(uid) as never).type.value as workloadapi.Workload;
  const SE_UID = "Kubernetes/networking.istio.io/ServiceEntry/ns/pay";

  test("a STATIC entry: a service per host with its CIDR addresses, and its inline endpoints as workloads", () => {
    const { serviceEntries, index } = setup();
    serviceEntries.upsert(
      serviceEntry(
        "pay",
        {
          hosts: ["pay.example", "pay2.example"],
          addresses: ["240.0.0.1", "10.1.2.3/16"],
          resolution: "STATIC",
          subjectAltNames: ["spiffe://td/ns/ns/sa/pay"],
          ports: [
            { number: 443, name: "https", protocol: "HTTPS" },
            { number: 80, name: "http", protocol: "HTTP", targetPort: 8080 },
          ],
          endpoints: [
            {
              address: "10.0.0.1",
              ports: { http: 9999 },
              weight: 3,
              locality: "r1/z1",
              serviceAccount: "pay",
              network: "vpc",
            },
            { address: "10.0.0.2" },
          ],
        },
        { labels: { app: "payments" } },
      ),
    );
    const service = serviceOf(index, "ns/pay.example");
    assert.equal(service.name, "pay");
    assert.deepEqual(
      service.addresses.map((a) => [a.network, ipString(a.address), a.length]),
      [
        ["net1", "240.0.0.1", undefined],
        ["net1", "10.1.0.0", 16],
      ],
    );
    assert.deepEqual(
      service.ports.map((p) => [p.servicePort, p.targetPort, workloadapi.AppProtocol[p.appProtocol]]),
      [
        [443, 443, "TLS"],
        [80, 8080, "HTTP11"],
      ],
    );
    assert.deepEqual(service.subjectAltNames, ["spiffe://td/ns/ns/sa/pay"]);
    assert.equal(service.canonical, true);
    assert.equal(service.loadBalancing, undefined);
    assert.ok(index.services.get("ns/pay2.example"));
    assert.equal(index.lookup("net1/10.1.0.0/16")[0]?.name, "ns/pay.example");

    const first = workloadOf(index, `${SE_UID}/10.0.0.1`);
    assert.equal(first.name, "pay");
    assert.equal(first.workloadName, "pay");
    assert.equal(first.canonicalName, "payments");
    assert.equal(first.network, "vpc");
    assert.equal(first.capacity, 3);
    assert.equal(first.serviceAccount, "pay");
    assert.deepEqual([first.locality?.region, first.locality?.zone, first.locality?.subzone], ["r1", "z1", ""]);
    assert.equal(first.status, workloadapi.WorkloadStatus.HEALTHY);
    assert.deepEqual(
      first.services["ns/pay.example"]?.ports.map((p) => [p.servicePort, p.targetPort]),
      [
        [443, 443],
        [80, 9999],
      ],
    );
    assert.deepEqual(Object.keys(first.services).sort(), ["ns/pay.example", "ns/pay2.example"]);
    const second = workloadOf(index, `${SE_UID}/10.0.0.2`);
    assert.equal(second.network, "net1", "an endpoint without a network is in the cluster's");
    assert.equal(second.capacity, undefined);
    assert.equal(index.lookup("net1/10.0.0.2")[0]?.name, `${SE_UID}/10.0.0.2`);
  });

  test("NONE passes through; a DNS entry without endpoints has its hosts as workloads, allocated addresses from its status", () => {
    const { serviceEntries, index } = setup();
    serviceEntries.upsert(
      serviceEntry("any", { hosts: ["*.any.example"], resolution: "NONE", ports: [{ number: 5432, name: "tcp" }] }),
      {
        ...serviceEntry(
          "dns",
          { hosts: ["a.example", "b.example"], resolution: "DNS", ports: [{ number: 80, name: "http" }] },
          { annotations: { "networking.istio.io/traffic-distribution": "PreferSameNode" } },
        ),
        status: {
          addresses: [
            { host: "a.example", value: "240.240.0.1" },
            { host: "a.example", value: "2001:2::1" },
          ],
        },
      } as ServiceEntry,
    );
    const passthrough = serviceOf(index, "ns/*.any.example").loadBalancing;
    assert.equal(passthrough?.mode, workloadapi.LoadBalancing_Mode.PASSTHROUGH);
    assert.equal(passthrough?.healthPolicy, workloadapi.LoadBalancing_HealthPolicy.ALLOW_ALL);
    assert.equal(index.workloads.list().length, 2, "only the DNS entry's hosts are workloads");
    const a = serviceOf(index, "ns/a.example");
    assert.deepEqual(
      a.addresses.map((x) => ipString(x.address)),
      ["240.240.0.1", "2001:2::1"],
    );
    assert.equal(a.loadBalancing?.mode, workloadapi.LoadBalancing_Mode.FAILOVER);
    assert.equal(a.loadBalancing?.routingPreference.length, 5);
    assert.deepEqual(serviceOf(index, "ns/b.example").addresses, []);
    const host = workloadOf(index, "Kubernetes/networking.istio.io/ServiceEntry/ns/dns/a.example");
    assert.equal(host.hostname, "a.example");
    assert.deepEqual(host.addresses, []);
    assert.deepEqual(Object.keys(host.services), ["ns/a.example"], "each host's workload serves that host only");
  });

  test("a workloadSelector selects Pods and WorkloadEntries; a Service selects WorkloadEntries; a WorkloadEntry's spec labels under its own", () => {
    const { pods, services, serviceEntries, workloadEntries, index, changes } = setup();
    serviceEntries.upsert(
      serviceEntry("inv", {
        hosts: ["inv.internal"],
        resolution: "STATIC",
        workloadSelector: { labels: { app: "inv" } },
        ports: [
          { number: 80, name: "web", targetPort: 8081 },
          { number: 90, name: "admin" },
        ],
      }),
    );
    services.upsert(
      service("app", {
        selector: { app: "app" },
        clusterIP: "10.96.0.10",
        ports: [
          { name: "http", port: 80, targetPort: 8080 },
          { name: "grpc", port: 90, targetPort: "backend" },
        ],
      }),
    );
    pods.upsert(pod("inv-0", { app: "inv" }, "10.244.0.7"));
    workloadEntries.upsert(
      workloadEntry(
        "vm",
        { address: "10.30.0.5", labels: { app: "app", tier: "db" }, ports: { http: 8088 }, weight: 2 },
        { app: "inv" },
      ),
      workloadEntry("vm-dns", { address: "vm.example", labels: { app: "app" }, ports: { backend: 7070 } }),
    );
    const podWorkload = workloadOf(index, "Kubernetes//Pod/ns/inv-0");
    assert.deepEqual(
      podWorkload.services["ns/inv.internal"]?.ports.map((p) => [p.servicePort, p.targetPort]),
      [
        [80, 8080],
        [90, 90],
      ],
      "the Pod's container port named as the entry's port",
    );
    const vm = workloadOf(index, "Kubernetes/networking.istio.io/WorkloadEntry/ns/vm");
    assert.deepEqual(Object.keys(vm.services), ["ns/inv.internal"], "its own label wins over its spec's");
    assert.equal(vm.capacity, 2);
    assert.equal(vm.canonicalName, "inv");
    assert.equal(vm.workloadName, "vm");
    assert.equal(index.lookup("net1/10.30.0.5")[0]?.name, "Kubernetes/networking.istio.io/WorkloadEntry/ns/vm");
    const dns = workloadOf(index, "Kubernetes/networking.istio.io/WorkloadEntry/ns/vm-dns");
    assert.equal(dns.hostname, "vm.example");
    assert.deepEqual(
      dns.services[SVC]?.ports.map((p) => [p.servicePort, p.targetPort]),
      [
        [80, 8080],
        [90, 7070],
      ],
    );
    assert.deepEqual(
      index.lookup(SVC).map((i) => i.name),
      [SVC, "Kubernetes/networking.istio.io/WorkloadEntry/ns/vm-dns"],
    );
    // Relabelled out of the entry, into the Service: that WorkloadEntry alone changes.
    changes.length = 0;
    workloadEntries.upsert(workloadEntry("vm", { address: "10.30.0.5", labels: { app: "app" } }));
    assert.deepEqual(changes, [["Kubernetes/networking.istio.io/WorkloadEntry/ns/vm"]]);
    assert.deepEqual(Object.keys(workloadOf(index, "Kubernetes/networking.istio.io/WorkloadEntry/ns/vm").services), [
      SVC,
    ]);
  });

  test("one hostname: the Service wins its namespace (the entry there sends no endpoints), the oldest entry elsewhere; the Service is canonical, else the oldest", () => {
    const { services, serviceEntries, index } = setup();
    const shadow = (name: string, namespace: string, created: string, address: string) =>
      serviceEntry(
        name,
        {
          hosts: ["app.ns.svc.cluster.local"],
          resolution: "STATIC",
          ports: [{ number: 80, name: "http" }],
          endpoints: [{ address }],
        },
        { creationTimestamp: created },
        namespace,
      );
    serviceEntries.upsert(
      shadow("same", "ns", "2026-04-01T00:00:00Z", "10.40.0.1"),
      shadow("newer", "edge", "2026-03-01T00:00:00Z", "10.40.0.3"),
      shadow("older", "edge", "2026-02-01T00:00:00Z", "10.40.0.2"),
    );
    assert.equal(serviceOf(index, SVC).name, "same");
    assert.equal(serviceOf(index, SVC).canonical, false);
    assert.equal(serviceOf(index, "edge/app.ns.svc.cluster.local").name, "older");
    assert.equal(serviceOf(index, "edge/app.ns.svc.cluster.local").canonical, true, "the oldest entry is canonical");
    services.upsert(service("app", { selector: { app: "app" }, clusterIP: "10.96.0.10", ports: [{ port: 80 }] }));
    assert.equal(serviceOf(index, SVC).name, "app");
    assert.equal(serviceOf(index, SVC).canonical, true);
    assert.equal(serviceOf(index, "edge/app.ns.svc.cluster.local").canonical, false);
    const uids = () =>
      index.workloads
        .list()
        .map((w) => w.name)
        .sort();
    assert.deepEqual(uids(), ["Kubernetes/networking.istio.io/ServiceEntry/edge/older/10.40.0.2"]);
    services.delete("ns/app");
    assert.equal(serviceOf(index, SVC).name, "same");
    assert.equal(serviceOf(index, "edge/app.ns.svc.cluster.local").canonical, true, "the oldest entry again");
    assert.deepEqual(uids(), [
      "Kubernetes/networking.istio.io/ServiceEntry/edge/older/10.40.0.2",
      "Kubernetes/networking.istio.io/ServiceEntry/ns/same/10.40.0.1",
    ]);
  });

  test("an entry goes through its service waypoint, its endpoints and WorkloadEntries through a workload waypoint; they reference policies", () => {
    const { serviceEntries, workloadEntries, gateways, authorizationPolicies, index } = setup();
    gateways.upsert({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "egress", namespace: "ns", labels: { "istio.io/waypoint-for": "all" } },
      spec: { gatewayClassName: "istio-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
      status: { addresses: [{ type: "IPAddress", value: "10.96.200.9" }] },
    } as gatewayapi.Gateway);
    authorizationPolicies.upsert(
      authorizationPolicy("ns", "pay", { ...allow, selector: { matchLabels: { app: "pay" } } }),
    );
    serviceEntries.upsert(
      serviceEntry(
        "pay",
        {
          hosts: ["pay.example"],
          resolution: "STATIC",
          ports: [{ number: 80, name: "http" }],
          endpoints: [{ address: "10.0.0.1", labels: { "istio.io/use-waypoint": "egress" } }, { address: "10.0.0.2" }],
        },
        { labels: { app: "pay", "istio.io/use-waypoint": "egress" } },
      ),
    );
    workloadEntries.upsert(workloadEntry("vm", { address: "10.30.0.5" }, { "istio.io/use-waypoint": "egress" }));
    const waypointIp = (address: workloadapi.GatewayAddress | undefined) =>
      address?.destination.case === "address" ? ipString(address.destination.value.address) : undefined;
    assert.equal(waypointIp(serviceOf(index, "ns/pay.example").waypoint), "10.96.200.9");
    assert.equal(waypointIp(workloadOf(index, `${SE_UID}/10.0.0.1`).waypoint), "10.96.200.9");
    assert.equal(workloadOf(index, `${SE_UID}/10.0.0.2`).waypoint, undefined, "by its own labels, not the entry's");
    assert.deepEqual(workloadOf(index, `${SE_UID}/10.0.0.2`).authorizationPolicies, ["ns/pay"]);
    assert.equal(
      waypointIp(workloadOf(index, "Kubernetes/networking.istio.io/WorkloadEntry/ns/vm").waypoint),
      "10.96.200.9",
    );
  });
});

describe("ambient index: status (AMBIENT_ENABLE_STATUS)", () => {
  /** What the writer `fieldManager` reports, by key. */
  const reported = (index: AmbientIndex, fieldManager: string) =>
    new Map(
      (index.statusReporters.find((r) => r.fieldManager === fieldManager)?.reports.list() ?? []).map((r) => [r.key, r]),
    );
  const bound = (message: string) => ({ status: true, reason: "WaypointAccepted", message, observedGeneration: 0 });
  const unbound = (reason: string, message: string) => ({ status: false, reason, message, observedGeneration: 0 });

  test("none is built unless asked", () => {
    assert.deepEqual(setup().index.statusReporters, []);
  });

  test("a Service is bound to its waypoint, or told why not: not ready, attachment denied, traffic type", () => {
    const { services, gateways, index } = setup("cluster.local", false, true);
    const serviceStatus = () => reported(index, "istio-ambient-service").get(SVC);
    const labelled = (labels: Record<string, string>) =>
      services.upsert({
        ...service("app", { clusterIP: "10.96.0.10", ports: [{ port: 80 }] }),
        metadata: { name: "app", namespace: "ns", labels },
      });
    labelled({});
    assert.deepEqual(serviceStatus()?.target, { apiVersion: "v1", kind: "Service", namespace: "ns", name: "app" });
    assert.deepEqual(serviceStatus()?.conditions, {
      "istio.io/WaypointBound": null,
      "istio.io/WaypointMissing": null,
    });
    labelled({ "istio.io/use-waypoint": "svc", "istio.io/ingress-use-waypoint": "true" });
    assert.deepEqual(
      serviceStatus()?.conditions["istio.io/WaypointBound"],
      unbound("WaypointIsNotReady", 'waypoint "ns/svc" is not ready'),
    );
    gateways.upsert(waypoint("svc"), waypoint("wl", { "istio.io/waypoint-for": "workload" }));
    assert.deepEqual(
      serviceStatus()?.conditions["istio.io/WaypointBound"],
      bound("Successfully attached to waypoint ns/svc. Ingress traffic will traverse the waypoint"),
    );
    labelled({ "istio.io/use-waypoint": "svc", "istio.io/ingress-use-waypoint": "no" });
    assert.deepEqual(
      serviceStatus()?.conditions["istio.io/WaypointBound"],
      bound(
        "Successfully attached to waypoint ns/svc. Ingress traffic is not using the waypoint, set the istio.io/ingress-use-waypoint label to true if desired.",
      ),
    );
    labelled({ "istio.io/use-waypoint": "wl" });
    assert.deepEqual(
      serviceStatus()?.conditions["istio.io/WaypointBound"],
      unbound(
        "UnsupportedTrafficType",
        'attempting to bind to traffic type "service" which the waypoint "ns/wl" does not support',
      ),
    );
    gateways.upsert({ ...waypoint("svc"), metadata: { name: "svc", namespace: "infra" } } as gatewayapi.Gateway);
    labelled({ "istio.io/use-waypoint": "svc", "istio.io/use-waypoint-namespace": "infra" });
    assert.deepEqual(
      serviceStatus()?.conditions["istio.io/WaypointBound"],
      unbound("AttachmentDenied", 'we are not permitted to attach to waypoint "infra/svc" (missing allowedRoutes?)'),
    );
  });

  test("a wildcard ServiceEntry without a waypoint is missing one; a WorkloadEntry is bound or told why not", () => {
    const { serviceEntries, workloadEntries, pods, gateways, index } = setup("cluster.local", false, true);
    serviceEntries.upsert(
      serviceEntry("wild", {
        hosts: ["*.example.com"],
        resolution: "DYNAMIC_DNS",
        ports: [{ number: 80, name: "http" }],
      }),
    );
    assert.deepEqual(reported(index, "istio-ambient-service").get("ns/*.example.com")?.conditions, {
      "istio.io/WaypointBound": null,
      "istio.io/WaypointMissing": {
        status: true,
        reason: "NoWaypointForWildcardService",
        message: "ServiceEntry will not apply until it is bound to a valid waypoint.",
        observedGeneration: 0,
      },
      "istio.io/VisibilityApplied": null,
    });
    // A racing connect strategy without a waypoint is said instead.
    serviceEntries.upsert(
      serviceEntry(
        "wild",
        { hosts: ["*.example.com"], resolution: "DYNAMIC_DNS", ports: [{ number: 80, name: "http" }] },
        { annotations: { "istio.io/connect-strategy": "race_first_tcp_connect" } },
      ),
    );
    assert.equal(
      reported(index, "istio-ambient-service").get("ns/*.example.com")?.conditions["istio.io/WaypointMissing"]?.reason,
      "NoWaypointForRacingConnectStrategy",
    );
    gateways.upsert(waypoint("svc"));
    workloadEntries.upsert(workloadEntry("vm", { address: "10.30.0.5" }, { "istio.io/use-waypoint": "svc" }));
    pods.upsert(pod("app-0", { app: "app", "istio.io/use-waypoint": "svc" }, "10.244.0.5"));
    const entries = reported(index, "istio-ambient-workloadentry");
    assert.deepEqual([...entries.keys()], ["Kubernetes/networking.istio.io/WorkloadEntry/ns/vm"], "no Pod's");
    assert.deepEqual([...entries.values()][0]?.conditions, {
      "istio.io/WaypointBound": unbound(
        "UnsupportedTrafficType",
        'attempting to bind to traffic type "workload" which the waypoint "ns/svc" does not support',
      ),
    });
    gateways.upsert(waypoint("svc", { "istio.io/waypoint-for": "all" }));
    assert.deepEqual(
      [...reported(index, "istio-ambient-workloadentry").values()][0]?.conditions["istio.io/WaypointBound"],
      bound("Successfully attached to waypoint ns/svc"),
    );
  });

  test("a WorkloadEntry that only inherits its namespace's service waypoint is simply not bound", () => {
    const { workloadEntries, namespaces, gateways, index } = setup("cluster.local", false, true);
    namespaces.upsert({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ns", labels: { "istio.io/use-waypoint": "svc" } },
    });
    gateways.upsert(waypoint("svc"));
    workloadEntries.upsert(workloadEntry("vm", { address: "10.30.0.5" }));
    const conditions = () => [...reported(index, "istio-ambient-workloadentry").values()][0]?.conditions;
    assert.deepEqual(conditions(), { "istio.io/WaypointBound": null });
    // Its own label naming it is an error.
    workloadEntries.upsert(workloadEntry("vm", { address: "10.30.0.5" }, { "istio.io/use-waypoint": "svc" }));
    assert.equal(conditions()?.["istio.io/WaypointBound"]?.reason, "UnsupportedTrafficType");
  });

  test("ztunnel's policies are accepted or not; a waypoint policy's targetRefs bind it", () => {
    const { authorizationPolicies, services, gateways, gatewayClasses, index } = setup("cluster.local", false, true);
    authorizationPolicies.upsert(
      { ...authorizationPolicy("ns", "ok", allow), metadata: { name: "ok", namespace: "ns", generation: 3 } },
      authorizationPolicy("ns", "custom", { action: "CUSTOM", provider: { name: "ext" } }),
      authorizationPolicy("ns", "one", {
        ...allow,
        targetRefs: [{ kind: "Gateway", group: "gateway.networking.k8s.io", name: "svc" }],
      }),
      authorizationPolicy("ns", "two", {
        ...allow,
        targetRefs: [
          { kind: "Service", group: "", name: "app" },
          { kind: "GatewayClass", group: "gateway.networking.k8s.io", name: "istio-waypoint" },
        ],
      }),
    );
    const ztunnel = reported(index, "istio-ambient-ztunnel-policy");
    assert.deepEqual([...ztunnel.keys()].sort(), ["ns/custom", "ns/ok"], "not the waypoints'");
    assert.deepEqual(ztunnel.get("ns/ok")?.conditions, {
      ZtunnelAccepted: { status: true, reason: "Accepted", message: "attached to ztunnel", observedGeneration: 3 },
    });
    assert.deepEqual(ztunnel.get("ns/ok")?.target, {
      apiVersion: "security.istio.io/v1",
      kind: "AuthorizationPolicy",
      namespace: "ns",
      name: "ok",
    });
    assert.equal(ztunnel.get("ns/custom")?.conditions.ZtunnelAccepted?.status, false);
    assert.equal(ztunnel.get("ns/custom")?.conditions.ZtunnelAccepted?.reason, "UnsupportedValue");
    const waypointPolicy = (name: string) =>
      reported(index, "istio-ambient-waypoint-policy").get(`ns/${name}`)?.conditions.WaypointAccepted;
    assert.deepEqual(waypointPolicy("one"), {
      status: false,
      reason: "TargetNotFound",
      message: "not bound",
      observedGeneration: 0,
    });
    gateways.upsert(waypoint("svc"));
    assert.deepEqual(waypointPolicy("one"), {
      status: true,
      reason: "Accepted",
      message: "bound to ns/svc",
      observedGeneration: 0,
    });
    // Two targets: the Service is bound, the class is not in the root namespace.
    assert.deepEqual(waypointPolicy("two"), {
      status: false,
      reason: "Invalid",
      message: "Invalid targetRefs: Service.core:ns/app, GatewayClass.gateway.networking.k8s.io:ns/istio-waypoint",
      observedGeneration: 0,
    });
    services.upsert({
      ...service("app", { clusterIP: "10.96.0.10", ports: [{ port: 80 }] }),
      metadata: { name: "app", namespace: "ns", labels: { "istio.io/use-waypoint": "svc" } },
    });
    gatewayClasses.upsert({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "istio-waypoint" },
    });
    assert.deepEqual(waypointPolicy("two"), {
      status: true,
      reason: "PartiallyInvalid",
      message: "Invalid targetRefs: GatewayClass.gateway.networking.k8s.io:ns/istio-waypoint",
      observedGeneration: 0,
    });
  });
});
