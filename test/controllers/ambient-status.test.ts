// Ambient status beside istiod (PILOT_ENABLE_AMBIENT on both sides, AMBIENT_ENABLE_STATUS by default),
// on a cluster of their own: each side gets waypoints (Gateways of a class nobody deploys, their
// addresses written by the test), Services bound to them or not, a wildcard ServiceEntry, a
// WorkloadEntry and AuthorizationPolicies for ztunnel and for waypoints. Sluice runs its Kubernetes
// source, the ambient index and the status writer as sluiced runs them (without the Lease: istiod holds
// istio-status-leader for its own side). Each object's conditions (but their times) and the status
// writes in its managedFields (field managers, fields) must be istiod's; an object without any
// condition to write is not written at all.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AmbientIndex } from "../../src/ambient/index.ts";
import { type ConfigObject, KINDS, kindKey } from "../../src/config/index.ts";
import { AmbientStatusWriter, storeStatusTarget } from "../../src/controllers/index.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeSource } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason } from "../cluster/index.ts";
import { peersSkipReason } from "../peers/paths.ts";
import { AMBIENT_OPTIONS } from "../support/ambient-options.ts";
import { type IstiodBeside, startIstiodBeside } from "../support/istiod-beside.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason() ?? peersSkipReason("istiod");
const SELECT_LABEL = "sluice.test/ambient-status";
const GATEWAY_API = "gateway.networking.k8s.io";
/** What the index reads. */
const READ = [
  ["", "Pod"],
  ["", "Service"],
  ["", "Namespace"],
  ["", "Node"],
  ["networking.istio.io", "ServiceEntry"],
  ["networking.istio.io", "WorkloadEntry"],
  ["security.istio.io", "AuthorizationPolicy"],
  ["security.istio.io", "PeerAuthentication"],
  [GATEWAY_API, "Gateway"],
  [GATEWAY_API, "GatewayClass"],
];

const waypoint = (name: string, labels: Record<string, string> = {}): ConfigObject => ({
  apiVersion: `${GATEWAY_API}/v1`,
  kind: "Gateway",
  metadata: { name, labels },
  spec: { gatewayClassName: "test-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
});
const service = (name: string, labels: Record<string, string> = {}): ConfigObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, labels },
  spec: { ports: [{ name: "http", port: 80 }], selector: { app: name } },
});
const policy = (name: string, spec: Record<string, unknown>): ConfigObject => ({
  apiVersion: "security.istio.io/v1",
  kind: "AuthorizationPolicy",
  metadata: { name },
  spec,
});

/** What each side is given, in its namespace. */
function objects(): ConfigObject[] {
  return [
    waypoint("wp"),
    waypoint("wl", { "istio.io/waypoint-for": "workload" }),
    service("bound", { "istio.io/use-waypoint": "wp", "istio.io/ingress-use-waypoint": "true" }),
    service("not-ready", { "istio.io/use-waypoint": "missing" }),
    service("wrong-type", { "istio.io/use-waypoint": "wl" }),
    service("plain"),
    {
      apiVersion: "networking.istio.io/v1",
      kind: "ServiceEntry",
      metadata: { name: "wild" },
      spec: { hosts: ["*.wild.example"], resolution: "NONE", ports: [{ number: 80, name: "http", protocol: "HTTP" }] },
    },
    {
      apiVersion: "networking.istio.io/v1",
      kind: "ServiceEntry",
      metadata: { name: "racing", annotations: { "istio.io/connect-strategy": "RACE_FIRST_TCP_CONNECT" } },
      spec: { hosts: ["racing.example"], resolution: "NONE", ports: [{ number: 80, name: "http", protocol: "HTTP" }] },
    },
    {
      apiVersion: "networking.istio.io/v1",
      kind: "WorkloadEntry",
      metadata: { name: "vm", labels: { "istio.io/use-waypoint": "wp" } },
      spec: { address: "10.0.0.5" },
    },
    policy("allow", { rules: [{ from: [{ source: { namespaces: ["shop"] } }] }] }),
    policy("audit", { action: "AUDIT", rules: [{}] }),
    policy("waypoint", {
      targetRefs: [
        { kind: "Service", group: "", name: "bound" },
        { kind: "Gateway", group: GATEWAY_API, name: "nope" },
      ],
      rules: [{}],
    }),
  ];
}

/** Where each object is, with `<ns>` for the side's namespace. */
function pathOf(obj: ConfigObject): string {
  const kind = obj.kind.toLowerCase();
  const plural = kind.endsWith("ry") || kind.endsWith("cy") ? `${kind.slice(0, -1)}ies` : `${kind}s`;
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
  return `${group ? `/apis/${group}` : "/api"}/${version}/namespaces/<ns>/${plural}`;
}

interface Stored {
  metadata: { managedFields?: { manager: string; subresource?: string; time?: string }[] };
  status?: { conditions?: Record<string, unknown>[] };
}

/** The side's store, its Kubernetes source, the ambient index with its statuses, and the writer. */
async function sluiceSide(cluster: Cluster) {
  const store = new ConfigStore({ sourceOrder: ["kubernetes"] });
  const source = new KubeSource({
    kubeConfig: cluster.kubeConfig(),
    writer: store,
    discoverySelectors: [{ matchLabels: { [SELECT_LABEL]: "sluice" } }],
    kinds: KINDS.filter((k) => READ.some(([group, kind]) => k.group === group && k.kind === kind)),
  });
  await source.start();
  const collection = (group: string, kind: string) => store.collection(kindKey(group, kind)) as never;
  const index = new AmbientIndex(
    {
      pods: collection("", "Pod"),
      services: collection("", "Service"),
      serviceEntries: collection("networking.istio.io", "ServiceEntry"),
      workloadEntries: collection("networking.istio.io", "WorkloadEntry"),
      namespaces: collection("", "Namespace"),
      nodes: collection("", "Node"),
      authorizationPolicies: collection("security.istio.io", "AuthorizationPolicy"),
      peerAuthentications: collection("security.istio.io", "PeerAuthentication"),
      gateways: collection(GATEWAY_API, "Gateway"),
      gatewayClasses: collection(GATEWAY_API, "GatewayClass"),
    },
    { ...AMBIENT_OPTIONS, status: true },
  );
  const writer = new AmbientStatusWriter({
    reporters: index.statusReporters,
    target: storeStatusTarget(store, source),
  });
  writer.start();
  return { source, writer };
}

/** An object's status writes as the API server records them, and its conditions, but for their times and its namespace. */
function comparable(stored: Stored, ns: string): unknown {
  const writes = (stored.metadata.managedFields ?? [])
    .filter((f) => f.subresource === "status")
    .map(({ time: _, ...f }) => f);
  const conditions = (stored.status?.conditions ?? []).map(({ lastTransitionTime, ...c }) => {
    assert.ok(!Number.isNaN(Date.parse(String(lastTransitionTime))), `a time: ${lastTransitionTime}`);
    return c;
  });
  return JSON.parse(JSON.stringify({ writes, conditions }).replaceAll(ns, "<ns>"));
}

describe("ambient status against istiod", { skip: skip ?? false }, () => {
  let beside: IstiodBeside;
  let cluster: Cluster;
  let sides: IstiodBeside["namespaces"];
  let sluice: Awaited<ReturnType<typeof sluiceSide>>;
  const read = async (ns: string, obj: ConfigObject) =>
    (await cluster.must("GET", `${pathOf(obj).replace("<ns>", ns)}/${obj.metadata.name}`)).body as Stored;

  before(async () => {
    beside = await startIstiodBeside({
      selectLabel: SELECT_LABEL,
      name: "ambient-status",
      env: { PILOT_ENABLE_AMBIENT: "true" },
    });
    cluster = beside.cluster;
    sides = beside.namespaces;
    sluice = await sluiceSide(cluster);
    for (const ns of [sides.istiod, sides.sluice]) {
      for (const obj of objects()) await cluster.must("POST", pathOf(obj).replace("<ns>", ns), obj);
      // The waypoints are ready: their addresses, as a deployment controller would write them.
      for (const [name, ip] of [
        ["wp", "10.96.0.91"],
        ["wl", "10.96.0.92"],
      ]) {
        const path = `/apis/${GATEWAY_API}/v1/namespaces/${ns}/gateways/${name}`;
        const gateway = (await cluster.must("GET", path)).body as Record<string, unknown>;
        await cluster.must("PUT", `${path}/status`, {
          ...gateway,
          status: { addresses: [{ type: "IPAddress", value: ip }] },
        });
      }
    }
  });

  after(async () => {
    sluice?.writer.stop();
    sluice?.source.stop();
    await beside?.stop();
  });

  test("every object's conditions and status writes are istiod's", async () => {
    const written = objects().filter((o) => o.kind !== "Gateway" && o.metadata.name !== "plain");
    for (const ns of [sides.istiod, sides.sluice]) {
      for (const obj of written) {
        await waitFor(
          async () => ((await read(ns, obj)).status?.conditions ?? []).length > 0,
          `${ns}: ${obj.kind} ${obj.metadata.name} has conditions`,
        );
      }
    }
    // The conditions expected (istiod's side, as read) and who wrote them.
    const summary: Record<string, unknown> = {};
    for (const obj of objects().filter((o) => o.kind !== "Gateway")) {
      const [istiod, sluice] = await Promise.all([read(sides.istiod, obj), read(sides.sluice, obj)]);
      const name = `${obj.kind} ${obj.metadata.name}`;
      assert.deepEqual(comparable(sluice, sides.sluice), comparable(istiod, sides.istiod), name);
      const managers = (istiod.metadata.managedFields ?? [])
        .filter((f) => f.subresource === "status")
        .map((f) => f.manager);
      const conditions = (istiod.status?.conditions ?? []).map((c) => `${c.type} ${c.status} ${c.reason}`);
      summary[name] = [...conditions, ...managers];
    }
    assert.deepEqual(summary, {
      "Service bound": ["istio.io/WaypointBound True WaypointAccepted", "istio-ambient-service"],
      "Service not-ready": ["istio.io/WaypointBound False WaypointIsNotReady", "istio-ambient-service"],
      "Service wrong-type": ["istio.io/WaypointBound False UnsupportedTrafficType", "istio-ambient-service"],
      "Service plain": [],
      "ServiceEntry wild": ["istio.io/WaypointMissing True NoWaypointForWildcardService", "istio-ambient-service"],
      "ServiceEntry racing": [
        "istio.io/WaypointMissing True NoWaypointForRacingConnectStrategy",
        "istio-ambient-service",
      ],
      "WorkloadEntry vm": ["istio.io/WaypointBound False UnsupportedTrafficType", "istio-ambient-workloadentry"],
      "AuthorizationPolicy allow": ["ZtunnelAccepted True Accepted", "istio-ambient-ztunnel-policy"],
      "AuthorizationPolicy audit": ["ZtunnelAccepted False UnsupportedValue", "istio-ambient-ztunnel-policy"],
      "AuthorizationPolicy waypoint": ["WaypointAccepted True PartiallyInvalid", "istio-ambient-waypoint-policy"],
    });
  });

  test("a condition no longer wanted is removed, as istiod removes it; a changed one is rewritten", async () => {
    const notReady = service("not-ready");
    const waypointPolicy = objects().find((o) => o.metadata.name === "waypoint") as ConfigObject;
    for (const ns of [sides.istiod, sides.sluice]) {
      await cluster.must(
        "PATCH",
        `${pathOf(notReady).replace("<ns>", ns)}/not-ready`,
        { metadata: { labels: { "istio.io/use-waypoint": null } } },
        { "content-type": "application/merge-patch+json" },
      );
      await cluster.must(
        "PATCH",
        `${pathOf(waypointPolicy).replace("<ns>", ns)}/waypoint`,
        { spec: { targetRefs: [{ kind: "Service", group: "", name: "bound" }] } },
        { "content-type": "application/merge-patch+json" },
      );
    }
    const conditions = async (ns: string, obj: ConfigObject) => (await read(ns, obj)).status?.conditions ?? [];
    for (const ns of [sides.istiod, sides.sluice]) {
      await waitFor(async () => (await conditions(ns, notReady)).length === 0, `${ns}: not-ready's condition removed`);
      await waitFor(
        async () => (await conditions(ns, waypointPolicy))[0]?.reason === "Accepted",
        `${ns}: the policy accepted`,
      );
    }
    for (const obj of [notReady, waypointPolicy]) {
      const [istiod, sluice] = await Promise.all([read(sides.istiod, obj), read(sides.sluice, obj)]);
      assert.deepEqual(comparable(sluice, sides.sluice), comparable(istiod, sides.istiod), obj.metadata.name);
    }
    const policy = await read(sides.sluice, waypointPolicy);
    assert.deepEqual(
      (policy.status?.conditions ?? []).map(({ lastTransitionTime: _, ...c }) => c),
      [
        {
          type: "WaypointAccepted",
          status: "True",
          reason: "Accepted",
          message: "bound to <ns>/wp".replace("<ns>", sides.sluice),
          observedGeneration: "2",
        },
      ],
    );
  });
});
