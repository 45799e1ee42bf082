// WorkloadEntry auto-registration against a real API server (test/cluster), through the Kubernetes
// source and the store as sluiced runs it, with proxies connecting to a real ADS server: the entry made
// from the WorkloadGroup on connect, marked on disconnect and deleted after the grace period, kept
// when the proxy is back within it; a proxy naming a missing group is refused, and (the identity
// check at its default) one without a verified identity of the entry's namespace and service account;
// the periodic sweep deletes what a stopped replica left behind; the health a VM's agent reports becomes
// the entry's Healthy condition, the same as istiod writes for the same steps when the peer is built.
// A proxy naming an existing entry (WORKLOAD_ENTRY) is bound to it only when the entry is health-checked:
// marked connected and disconnected, its reports written, its condition removed a grace period after
// it goes; a missing entry refuses the stream. Beside istiod, the same steps leave the same objects.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { pino } from "pino";
import { core } from "../../src/api/index.ts";
import { KINDS } from "../../src/config/index.ts";
import { WorkloadAutoRegistration, type WorkloadAutoRegistrationOptions } from "../../src/controllers/index.ts";
import type { IstioCondition } from "../../src/controllers/workload-health.ts";
import { parseProxy } from "../../src/model/index.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeSource } from "../../src/sources/kube/index.ts";
import { type ConnectionInfo, TypeUrl, type XdsError } from "../../src/xds/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { peersSkipReason } from "../peers/paths.ts";
import { type NodeInit, SotwClient } from "../support/ads-client.ts";
import { type IstiodBeside, startIstiodBeside } from "../support/istiod-beside.ts";
import { writers } from "../support/managed-fields.ts";
import { edsCluster, type Harness, startServer, waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();
/** Long enough to reconnect in, on a loaded machine. */
const GRACE_MS = 2000;

interface Entry {
  metadata: {
    name: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
    managedFields?: { manager: string; operation: string; subresource?: string }[];
  };
  spec: Record<string, unknown>;
  status?: { conditions?: IstioCondition[] };
}

const GROUP = {
  apiVersion: "networking.istio.io/v1",
  kind: "WorkloadGroup",
  metadata: { name: "vm" },
  spec: {
    metadata: { labels: { app: "vm", team: "group" }, annotations: { "example.com/note": "from-group" } },
    template: { serviceAccount: "vm-sa", ports: { http: 8080 }, labels: { tier: "template", team: "template" } },
  },
};

/** A VM's node as istio-agent sends it; `probed`: with the readiness probe its agent reports on. */
function vmNode(ns: string, group: string, ip: string, probed = false): NodeInit {
  return {
    id: `sidecar~${ip}~vm-1.${ns}~${ns}.svc.cluster.local`,
    locality: { region: "r1", zone: "z1" },
    metadata: {
      NAMESPACE: ns,
      CLUSTER_ID: "Kubernetes",
      AUTO_REGISTER_GROUP: group,
      NETWORK: "net1",
      LABELS: { version: "v1", "istio-locality": "r1.z1", team: "proxy" },
      ...(probed ? { PROXY_CONFIG: { readinessProbe: { httpGet: { port: 8080 } } } } : {}),
    },
  };
}

/** The WorkloadEntries of one namespace, read as the admin. */
function entries(cluster: Cluster, ns: string) {
  const path = `/apis/networking.istio.io/v1/namespaces/${ns}/workloadentries`;
  const get = async (name: string) => {
    const res = await cluster.request("GET", `${path}/${name}`);
    return res.status === 404 ? undefined : (res.body as Entry);
  };
  const health = async (name: string) => (await get(name))?.status?.conditions?.find((c) => c.type === "Healthy");
  return { get, health };
}

/**
 * Sluice's side: the cluster's WorkloadEntries and WorkloadGroups in a store, through the Kubernetes
 * source as sluiced reads them, the controller over them (this replica "sluiced-test", no identity
 * check unless `options` say) and an ADS server telling it of its streams.
 */
async function startSluice(cluster: Cluster, options: Partial<WorkloadAutoRegistrationOptions> = {}) {
  const store = new ConfigStore();
  const source = new KubeSource({
    kubeConfig: cluster.kubeConfig(),
    writer: store,
    kinds: KINDS.filter((k) => ["Namespace", "WorkloadEntry", "WorkloadGroup"].includes(k.kind)),
  });
  await source.start();
  const controller = new WorkloadAutoRegistration({
    store,
    target: source,
    instanceId: "sluiced-test",
    validateIdentity: false,
    ...options,
  });
  const xds = await startServer({ [TypeUrl.Cluster]: [edsCluster("a")] }, { connectionHooks: controller });
  const stop = async () => {
    await xds.close();
    controller.stop();
    source.stop();
  };
  return { store, source, xds, stop };
}

const HEALTH_CHECKS = "proxy.istio.io/health-checks-enabled";
const WLE_KIND = "networking.istio.io/WorkloadEntry";
const UNHEALTHY = "status code was not from [200,400), bad code 503";

/**
 * The health steps against one control plane's ADS address: a probed VM reports unhealthy, then
 * healthy; an unprobed VM reports unhealthy. What each step left in the entries: the Healthy condition
 * (its times checked, then left out), the health-checks annotation and the status writer.
 */
async function healthSteps(cluster: Cluster, ns: string, address: string) {
  const { get, health } = entries(cluster, ns);
  const connect = async (ip: string, probed: boolean) => {
    const client = SotwClient.connect(address);
    client.request({ node: vmNode(ns, "vm", ip, probed), typeUrl: TypeUrl.Cluster });
    await client.next();
    await waitFor(async () => (await get(`vm-${ip}-net1`)) !== undefined, `the entry of ${ip}`);
    return client;
  };
  const report = (client: SotwClient, message?: string) =>
    client.request({ typeUrl: TypeUrl.HealthInfo, ...(message ? { errorDetail: { code: 13, message } } : {}) });
  const reported = async (name: string, status: string) => {
    await waitFor(async () => (await health(name))?.status === status, `${name} Healthy=${status}`);
    const condition = (await health(name)) as IstioCondition;
    // Both the report's time (istiod reads its clock for each, nanoseconds apart).
    for (const time of [condition.lastProbeTime, condition.lastTransitionTime]) {
      assert.match(time ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    return { ...condition, lastProbeTime: "<time>", lastTransitionTime: "<time>" };
  };
  const probed = await connect("10.1.3.1", true);
  const unprobed = await connect("10.1.3.2", false);
  try {
    report(probed, UNHEALTHY);
    const down = await reported("vm-10.1.3.1-net1", "False");
    report(probed);
    const up = await reported("vm-10.1.3.1-net1", "True");
    report(unprobed, UNHEALTHY);
    const unprobedDown = await reported("vm-10.1.3.2-net1", "False");
    const annotation = async (name: string) => (await get(name))?.metadata.annotations?.[HEALTH_CHECKS];
    const writer = (await get("vm-10.1.3.1-net1"))?.metadata.managedFields
      ?.filter((f) => f.subresource === "status")
      .map((f) => ({ manager: f.manager, operation: f.operation }));
    return {
      probed: { annotation: await annotation("vm-10.1.3.1-net1"), down, up },
      unprobed: { annotation: await annotation("vm-10.1.3.2-net1"), down: unprobedDown },
      writer,
    };
  } finally {
    probed.close();
    unprobed.close();
  }
}

/** A VM bound to an existing entry: its node names the entry (WORKLOAD_ENTRY), no group. */
function boundNode(ns: string, entry: string, ip: string): NodeInit {
  return {
    id: `sidecar~${ip}~${entry}.${ns}~${ns}.svc.cluster.local`,
    metadata: { NAMESPACE: ns, CLUSTER_ID: "Kubernetes", WORKLOAD_ENTRY: entry },
  };
}

/** An entry written by hand, health-checked (the annotation istiod heeds, whatever its value) or not. */
function handEntry(name: string, address: string, healthChecked: boolean) {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: {
      name,
      labels: { app: name },
      annotations: { "example.com/owner": "ops", ...(healthChecked ? { [HEALTH_CHECKS]: "true" } : {}) },
    },
    spec: { address, serviceAccount: "vm-sa", ports: { http: 8080 } },
  };
}

/** The entries each side's namespace holds before the bound steps. */
const HAND_ENTRIES = [handEntry("bound", "10.2.0.1", true), handEntry("plain", "10.2.0.2", false)];

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * An entry as a comparison sees it: its times checked and then left out, its controller checked to be
 * `instance`, and who wrote which part of it (managedFields without their times).
 */
function snapshot(entry: Entry | undefined, instance: string) {
  assert.ok(entry, "the entry exists");
  const annotations = { ...entry.metadata.annotations };
  for (const name of ["istio.io/connectedAt", "istio.io/disconnectedAt"]) {
    if (annotations[name] === undefined) continue;
    assert.match(annotations[name], TIME);
    annotations[name] = "<time>";
  }
  if (annotations["istio.io/workloadController"] !== undefined) {
    assert.equal(annotations["istio.io/workloadController"], instance);
    annotations["istio.io/workloadController"] = "<instance>";
  }
  const conditions = entry.status?.conditions?.map((c) => {
    for (const time of [c.lastProbeTime, c.lastTransitionTime]) assert.match(time ?? "", TIME);
    return { ...c, lastProbeTime: "<time>", lastTransitionTime: "<time>" };
  });
  const status = entry.status && { ...entry.status, ...(conditions ? { conditions } : {}) };
  // Who wrote it, in a fixed order: the server orders managedFields by when each manager wrote, which
  // races with the test's own writes.
  return { labels: entry.metadata.labels, annotations, spec: entry.spec, status, writers: writers(entry) };
}

/**
 * The bound steps against one control plane (`instance`): a proxy naming a
 * missing entry, one naming an entry that is not health-checked (and reporting), and one naming a
 * health-checked entry, which reports unhealthy, then healthy, and goes. What each step left.
 */
async function boundSteps(cluster: Cluster, ns: string, address: string, instance: string) {
  const { get, health } = entries(cluster, ns);
  const see = async (name: string) => snapshot(await get(name), instance);
  const report = (client: SotwClient, message?: string) =>
    client.request({ typeUrl: TypeUrl.HealthInfo, ...(message ? { errorDetail: { code: 13, message } } : {}) });

  const missing = SotwClient.connect(address);
  missing.request({ node: boundNode(ns, "absent", "10.2.0.9"), typeUrl: TypeUrl.Cluster });
  const { code, details } = await missing.ended;
  missing.close();

  const plain = SotwClient.connect(address);
  plain.request({ node: boundNode(ns, "plain", "10.2.0.2"), typeUrl: TypeUrl.Cluster });
  await plain.next();
  report(plain, UNHEALTHY);

  const bound = SotwClient.connect(address);
  bound.request({ node: boundNode(ns, "bound", "10.2.0.1"), typeUrl: TypeUrl.Cluster });
  await bound.next();
  const connected = await see("bound");
  report(bound, UNHEALTHY);
  await waitFor(async () => (await health("bound"))?.status === "False", "bound Healthy=False");
  report(bound);
  await waitFor(async () => (await health("bound"))?.status === "True", "bound Healthy=True");
  const reported = await see("bound");
  bound.close();
  await waitFor(
    async () => (await get("bound"))?.metadata.annotations?.["istio.io/disconnectedAt"] !== undefined,
    "bound marked disconnected",
  );
  const disconnected = await see("bound");
  await waitFor(async () => (await health("bound")) === undefined, "bound's condition removed");
  const cleaned = await see("bound");
  const untouched = await see("plain");
  plain.close();
  return { refused: { code, details }, untouched, connected, reported, disconnected, cleaned };
}

describe("WorkloadAutoRegistration", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let groupUid: string;
  let source: KubeSource;
  let store: ConfigStore;
  let stopSluice: (() => Promise<void>) | undefined;
  /** With ISTIO_WORKLOAD_ENTRY_VALIDATE_IDENTITY at its default (on). */
  let checked: WorkloadAutoRegistration;
  let xds: Harness;
  const logged: string[] = [];
  const path = (kind: string, name = "") =>
    `/apis/networking.istio.io/v1/namespaces/${ns}/${kind}${name ? `/${name}` : ""}`;
  const entry = (name: string) => entries(cluster, ns).get(name);
  const node = (group: string, ip = "10.1.2.3") => vmNode(ns, group, ip);
  /** A proxy connected and answered once: its connect has been handled by then. */
  const connect = async (group: string) => {
    const client = SotwClient.connect(xds.address);
    client.request({ node: node(group), typeUrl: TypeUrl.Cluster });
    await client.next();
    return client;
  };

  before(async () => {
    cluster = await sharedCluster();
    ns = await cluster.namespace("wle-autoreg");
    const group = await cluster.must("POST", path("workloadgroups"), GROUP);
    groupUid = (group.body as { metadata: { uid: string } }).metadata.uid;
    const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line).msg) });
    // The registration itself over plaintext: the identity check has tests of its own below.
    let stop: () => Promise<void>;
    ({ source, store, xds, stop } = await startSluice(cluster, { gracePeriodMs: GRACE_MS, log }));
    stopSluice = stop;
    await waitFor(
      () => store.get({ kind: "networking.istio.io/WorkloadGroup", namespace: ns, name: "vm" }) !== undefined,
      "the group in the store",
    );
    checked = new WorkloadAutoRegistration({
      store,
      target: source,
      instanceId: "sluiced-test",
      gracePeriodMs: GRACE_MS,
    });
  });
  after(async () => {
    await stopSluice?.();
    checked?.stop();
  });

  test("a proxy naming its WorkloadGroup gets the entry on connect; it goes a grace period after it disconnects", async () => {
    const client = await connect("vm");
    const made = await entry("vm-10.1.2.3-net1");
    assert.ok(made, "the entry exists once the proxy is answered");
    // Labels: template < group metadata < the proxy's, istio-locality dropped.
    assert.deepEqual(made.metadata.labels, { tier: "template", app: "vm", team: "proxy", version: "v1" });
    assert.deepEqual(made.spec, {
      address: "10.1.2.3",
      serviceAccount: "vm-sa",
      ports: { http: 8080 },
      labels: { tier: "template", app: "vm", team: "proxy", version: "v1" },
      network: "net1",
      locality: "r1/z1",
    });
    const annotations = made.metadata.annotations ?? {};
    assert.equal(annotations["istio.io/autoRegistrationGroup"], "vm");
    assert.equal(annotations["example.com/note"], "from-group");
    assert.equal(annotations["istio.io/workloadController"], "sluiced-test");
    assert.match(annotations["istio.io/connectedAt"] ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(annotations["istio.io/disconnectedAt"], undefined);
    assert.deepEqual(made.metadata.ownerReferences, [
      { apiVersion: "networking.istio.io/v1", kind: "WorkloadGroup", name: "vm", uid: groupUid, controller: true },
    ]);

    client.close();
    await waitFor(async () => {
      const a = (await entry("vm-10.1.2.3-net1"))?.metadata.annotations ?? {};
      return a["istio.io/disconnectedAt"] !== undefined && a["istio.io/connectedAt"] === undefined;
    }, "disconnectedAt instead of connectedAt");
    await waitFor(async () => (await entry("vm-10.1.2.3-net1")) === undefined, "the entry deleted");
  });

  test("a proxy back within the grace period keeps its entry", async () => {
    const first = await connect("vm");
    first.close();
    await waitFor(
      async () => (await entry("vm-10.1.2.3-net1"))?.metadata.annotations?.["istio.io/disconnectedAt"] !== undefined,
      "disconnectedAt",
    );
    const second = await connect("vm");
    const back = await entry("vm-10.1.2.3-net1");
    assert.ok(back?.metadata.annotations?.["istio.io/connectedAt"], JSON.stringify(back?.metadata.annotations));
    assert.equal(back?.metadata.annotations?.["istio.io/disconnectedAt"], undefined);
    // The clean-up the disconnect scheduled has looked at the entry and left it.
    await waitFor(() => logged.includes("WorkloadEntry reconnected within the grace period: kept"), "the clean-up");
    assert.ok(await entry("vm-10.1.2.3-net1"), "the entry is still there");
    second.close();
    await waitFor(async () => (await entry("vm-10.1.2.3-net1")) === undefined, "the entry deleted");
  });

  test("with the identity check, only a proxy proving the entry's namespace and service account registers", async () => {
    const connection = (ip: string, identities?: string[]): ConnectionInfo => {
      const parsed = parseProxy(create(core.NodeSchema, node("vm", ip)));
      assert.ok(parsed.proxy, parsed.error);
      if (identities) parsed.proxy.verifiedIdentities = identities;
      return { id: `vm-${ip}`, proxy: parsed.proxy, connectedAt: new Date() };
    };
    const refused = async (conn: ConnectionInfo, message: RegExp) => {
      await assert.rejects(checked.connected(conn), (err: XdsError) => {
        assert.equal(err.code, status.PERMISSION_DENIED);
        assert.match(err.message, message);
        return true;
      });
      assert.equal(await entry(`${conn.id}-net1`), undefined);
    };
    await refused(connection("10.1.2.4"), /requires a verified identity/);
    await refused(
      connection("10.1.2.5", [`spiffe://cluster.local/ns/other/sa/vm-sa`]),
      /namespace mismatch: "other" vs "/,
    );
    await refused(
      connection("10.1.2.6", [`spiffe://cluster.local/ns/${ns}/sa/default`]),
      /service account mismatch: "default" vs "vm-sa"/,
    );
    const proven = connection("10.1.2.7", [`spiffe://cluster.local/ns/${ns}/sa/vm-sa`]);
    await checked.connected(proven);
    assert.ok(await entry("vm-10.1.2.7-net1"), "the proven proxy's entry");
    checked.disconnected(proven);
    await waitFor(async () => (await entry("vm-10.1.2.7-net1")) === undefined, "the entry deleted");
  });

  test("the periodic sweep deletes entries a stopped replica left behind, and only those", async () => {
    const left = (name: string, annotations: Record<string, string>) =>
      cluster.must("POST", path("workloadentries"), {
        apiVersion: "networking.istio.io/v1",
        kind: "WorkloadEntry",
        metadata: { name, annotations: { "istio.io/autoRegistrationGroup": "vm", ...annotations } },
        spec: { address: "10.7.7.7" },
      });
    const longAgo = "2026-01-01T00:00:00Z";
    await left("gone-disconnected", { "istio.io/workloadController": "gone", "istio.io/disconnectedAt": longAgo });
    await left("gone-connected", { "istio.io/workloadController": "gone", "istio.io/connectedAt": longAgo });
    await left("just-disconnected", { "istio.io/disconnectedAt": new Date().toISOString() });
    await cluster.must("POST", path("workloadentries"), {
      apiVersion: "networking.istio.io/v1",
      kind: "WorkloadEntry",
      metadata: { name: "by-hand", annotations: { "istio.io/disconnectedAt": longAgo } },
      spec: { address: "10.7.7.8" },
    });
    const names = ["gone-disconnected", "gone-connected", "just-disconnected", "by-hand"];
    await waitFor(
      () => names.every((name) => store.get({ kind: "networking.istio.io/WorkloadEntry", namespace: ns, name })),
      "the entries in the store",
    );
    // Connected a year ago, with connections that last at most an hour: left behind.
    const sweeper = new WorkloadAutoRegistration({
      store,
      target: source,
      instanceId: "sluiced-test",
      gracePeriodMs: 60_000,
      maxConnectionAgeMs: 3_600_000,
    });
    sweeper.sweep();
    await waitFor(async () => (await entry("gone-disconnected")) === undefined, "the disconnected one deleted");
    await waitFor(async () => (await entry("gone-connected")) === undefined, "the connected one deleted");
    // Within the grace period, and not auto-registered: kept.
    assert.ok(await entry("just-disconnected"));
    assert.ok(await entry("by-hand"));
    sweeper.stop();
  });

  test("a VM's health reports become its entry's Healthy condition, as istiod writes it", async () => {
    const written = await healthSteps(cluster, ns, xds.address);
    const condition = (status: string, message?: string) => ({
      type: "Healthy",
      status,
      lastProbeTime: "<time>",
      lastTransitionTime: "<time>",
      ...(message ? { message } : {}),
    });
    assert.deepEqual(written, {
      // The annotation the registry heeds the condition by, from the agent's readiness probe.
      probed: { annotation: "true", down: condition("False", UNHEALTHY), up: condition("True") },
      // Written without it too, as istiod does for an auto-registered entry; the registry ignores it.
      unprobed: { annotation: undefined, down: condition("False", UNHEALTHY) },
      writer: [{ manager: "pilot-discovery", operation: "Update" }],
    });
    await waitFor(async () => (await entry("vm-10.1.3.1-net1")) === undefined, "the entry deleted");
  });

  test("a proxy naming a health-checked entry (WORKLOAD_ENTRY) controls it while connected; its condition goes a grace period after", async () => {
    for (const hand of HAND_ENTRIES) await cluster.must("POST", path("workloadentries"), hand);
    await waitFor(
      () => HAND_ENTRIES.every((e) => store.get({ kind: WLE_KIND, namespace: ns, name: e.metadata.name })),
      "the entries in the store",
    );
    const steps = await boundSteps(cluster, ns, xds.address, "sluiced-test");
    assert.deepEqual(steps.refused, {
      code: status.UNKNOWN,
      details: `proxy metadata indicates that it must correspond to an existing WorkloadEntry, however WorkloadEntry ${ns}/absent is not found`,
    });
    const written = { "example.com/owner": "ops", [HEALTH_CHECKS]: "true" };
    const controller = { "istio.io/workloadController": "<instance>" };
    assert.deepEqual(steps.connected.annotations, { ...written, ...controller, "istio.io/connectedAt": "<time>" });
    // Nothing else of the entry changes: it is not made from a group.
    assert.deepEqual(steps.connected.labels, { app: "bound" });
    assert.deepEqual(steps.connected.spec, HAND_ENTRIES[0]?.spec);
    assert.equal(steps.connected.status, undefined);
    assert.deepEqual(steps.reported.status, {
      conditions: [{ type: "Healthy", status: "True", lastProbeTime: "<time>", lastTransitionTime: "<time>" }],
    });
    assert.deepEqual(steps.disconnected.annotations, {
      ...written,
      ...controller,
      "istio.io/disconnectedAt": "<time>",
    });
    assert.equal(steps.disconnected.status?.conditions?.[0]?.status, "True");
    // The condition gone, the entry and its marks kept.
    assert.equal(steps.cleaned.status?.conditions, undefined);
    assert.deepEqual(steps.cleaned.annotations, steps.disconnected.annotations);
    // Not health-checked: the proxy is served and its entry left as written; its report is not heard.
    assert.deepEqual(steps.untouched.annotations, { "example.com/owner": "ops" });
    assert.equal(steps.untouched.status, undefined);
    assert.ok(logged.includes("unable to derive WorkloadEntry for health update"), logged.join("\n"));
  });

  test("with the identity check, only a proxy proving the named entry's namespace and service account controls it", async () => {
    await cluster.must("POST", path("workloadentries"), handEntry("checked", "10.2.0.3", true));
    await waitFor(() => store.get({ kind: WLE_KIND, namespace: ns, name: "checked" }) !== undefined, "the entry");
    let streams = 0;
    const connection = (identities?: string[]): ConnectionInfo => {
      const parsed = parseProxy(create(core.NodeSchema, boundNode(ns, "checked", "10.2.0.3")));
      assert.ok(parsed.proxy, parsed.error);
      if (identities) parsed.proxy.verifiedIdentities = identities;
      return { id: `checked-${++streams}`, proxy: parsed.proxy, connectedAt: new Date() };
    };
    const refused = (conn: ConnectionInfo, message: RegExp) =>
      assert.rejects(checked.connected(conn), (err: XdsError) => {
        assert.equal(err.code, status.PERMISSION_DENIED);
        assert.match(err.message, message);
        return true;
      });
    await refused(connection(), /requires a verified identity/);
    await refused(
      connection([`spiffe://cluster.local/ns/${ns}/sa/default`]),
      /service account mismatch: "default" vs "vm-sa"/,
    );
    const controllerOf = async () => (await entry("checked"))?.metadata.annotations?.["istio.io/workloadController"];
    assert.equal(await controllerOf(), undefined);
    const proven = connection([`spiffe://cluster.local/ns/${ns}/sa/vm-sa`]);
    await checked.connected(proven);
    assert.equal(await controllerOf(), "sluiced-test");
    checked.disconnected(proven);
    await waitFor(
      async () => (await entry("checked"))?.metadata.annotations?.["istio.io/disconnectedAt"] !== undefined,
      "disconnectedAt",
    );
  });

  test("the sweep removes the Healthy condition a stopped replica left on a health-checked entry, and keeps the entry", async () => {
    const annotations = {
      "istio.io/workloadController": "gone",
      "istio.io/disconnectedAt": "2026-01-01T00:00:00Z",
      [HEALTH_CHECKS]: "true",
    };
    const left = async (name: string, healthy: boolean) => {
      const made = await cluster.must("POST", path("workloadentries"), {
        apiVersion: "networking.istio.io/v1",
        kind: "WorkloadEntry",
        metadata: { name, annotations },
        spec: { address: "10.7.7.9" },
      });
      if (!healthy) return;
      const condition = { type: "Healthy", status: "True", lastProbeTime: "2026-01-01T00:00:00Z" };
      await cluster.must("PUT", `${path("workloadentries", name)}/status`, {
        ...(made.body as object),
        status: { conditions: [condition] },
      });
    };
    await left("gone-checked", true);
    await left("gone-unchecked", false);
    const stored = (name: string) => store.get({ kind: WLE_KIND, namespace: ns, name })?.object;
    await waitFor(
      () =>
        stored("gone-unchecked") !== undefined &&
        (stored("gone-checked")?.status as Entry["status"])?.conditions !== undefined,
      "the entries in the store",
    );
    const version = (await entry("gone-unchecked"))?.metadata.resourceVersion;
    const sweeper = new WorkloadAutoRegistration({ store, target: source, instanceId: "sluiced-test" });
    sweeper.sweep();
    await waitFor(async () => (await entry("gone-checked"))?.status?.conditions === undefined, "the condition removed");
    const kept = await entry("gone-checked");
    assert.deepEqual(kept?.metadata.annotations, annotations);
    // Without a condition there is nothing to clean up: not written.
    assert.equal((await entry("gone-unchecked"))?.metadata.resourceVersion, version);
    sweeper.stop();
  });

  test("a proxy naming a WorkloadGroup that does not exist is refused and gets nothing", async () => {
    const client = SotwClient.connect(xds.address);
    client.request({ node: node("missing"), typeUrl: TypeUrl.Cluster });
    const end = await client.ended;
    assert.equal(end.code, status.FAILED_PRECONDITION);
    assert.match(end.details, /cannot find WorkloadGroup .*\/missing/);
    client.close();
    assert.equal(await entry("missing-10.1.2.3-net1"), undefined);
  });
});

const istiodSkip = skip ?? peersSkipReason("istiod");
const SELECT_LABEL = "sluice.test/wle-health";

// istiod and Sluice's controller side by side in one cluster of their own, each over a namespace of
// its own (istiod's discovery selectors), given the same VMs and health reports: both write the same.
describe("WorkloadEntry health against istiod", { skip: istiodSkip }, () => {
  let cluster: Cluster;
  let beside: IstiodBeside | undefined;
  let sluice: Awaited<ReturnType<typeof startSluice>> | undefined;

  before(async () => {
    beside = await startIstiodBeside({
      selectLabel: SELECT_LABEL,
      name: "wle-health",
      // Over plaintext: no identity to check.
      env: { ISTIO_WORKLOAD_ENTRY_VALIDATE_IDENTITY: "false", PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: `${GRACE_MS}ms` },
      prepare: async (cluster, namespaces) => {
        for (const ns of Object.values(namespaces)) {
          await cluster.must("POST", `/apis/networking.istio.io/v1/namespaces/${ns}/workloadgroups`, GROUP);
          for (const hand of HAND_ENTRIES) {
            await cluster.must("POST", `/apis/networking.istio.io/v1/namespaces/${ns}/workloadentries`, hand);
          }
        }
      },
    });
    cluster = beside.cluster;
    sluice = await startSluice(cluster, { gracePeriodMs: GRACE_MS });
    const { store } = sluice;
    const ns = beside.namespaces.sluice;
    await waitFor(
      () => HAND_ENTRIES.every((e) => store.get({ kind: WLE_KIND, namespace: ns, name: e.metadata.name })),
      "the entries in Sluice's store",
    );
  });
  after(async () => {
    await sluice?.stop();
    await beside?.stop();
  });

  test("the same Healthy conditions for the same reports", async () => {
    assert.ok(beside && sluice);
    const { namespaces } = beside;
    const { writer: istiodWriter, ...istiod } = await healthSteps(cluster, namespaces.istiod, beside.istiod.xds);
    const { writer, ...written } = await healthSteps(cluster, namespaces.sluice, sluice.xds.address);
    assert.deepEqual(written, istiod);
    // An update of the status subresource under the user agent's command, pilot-discovery on both sides.
    assert.deepEqual(istiodWriter, [{ manager: "pilot-discovery", operation: "Update" }]);
    assert.deepEqual(writer, istiodWriter);
  });

  test("the same objects, step by step, for proxies naming existing entries (WORKLOAD_ENTRY)", async () => {
    assert.ok(beside && sluice);
    const { namespaces } = beside;
    // The namespace said the same way on both sides; the writers (managedFields) are compared as sets.
    const neutral = (steps: unknown, ns: string) => JSON.parse(JSON.stringify(steps).replaceAll(ns, "<ns>"));
    const istiod = await boundSteps(cluster, namespaces.istiod, beside.istiod.xds, "istiod-compare");
    const written = await boundSteps(cluster, namespaces.sluice, sluice.xds.address, "sluiced-test");
    assert.deepEqual(neutral(written, namespaces.sluice), neutral(istiod, namespaces.istiod));
  });
});
