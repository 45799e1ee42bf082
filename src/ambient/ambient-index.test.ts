import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { security, workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import type { AuthorizationPolicy, gatewayapi, PeerAuthentication } from "../config/types/index.ts";
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

function setup(trustDomain = "cluster.local", dryRunPolicies = false) {
  const pods = new StaticCollection<ConfigObject>([], { keyOf });
  const authorizationPolicies = new StaticCollection<AuthorizationPolicy>([], { keyOf });
  const peerAuthentications = new StaticCollection<PeerAuthentication>([], { keyOf });
  const services = new StaticCollection<ConfigObject>([], { keyOf });
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
    { pods, services, namespaces, nodes, authorizationPolicies, peerAuthentications, gateways, gatewayClasses },
    {
      clusterId: "Kubernetes",
      domainSuffix: "cluster.local",
      systemNamespace: "istio-system",
      trustDomain,
      rootNamespace: () => "istio-system",
      dryRunPolicies,
    },
  );
  const changes: string[][] = [];
  index.onAddressesChanged((names) => changes.push([...names].sort()));
  const policyChanges: string[][] = [];
  index.onPoliciesChanged((names) => policyChanges.push([...names].sort()));
  return {
    pods,
    services,
    namespaces,
    gateways,
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
const allow = { rules: [{ from: [{ source: { namespaces: ["shop"] } }] }] };

describe("ambient index: waypoints", () => {
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
