// WorkloadEntry auto-registration against a real API server (test/cluster), through the Kubernetes
// source and the store as sluiced runs it, with proxies connecting to a real ADS server: the entry made
// from the WorkloadGroup on connect, marked on disconnect and deleted after the grace period, kept
// when the proxy is back within it; a proxy naming a missing group is refused, and (the identity
// check at its default) one without a verified identity of the entry's namespace and service account;
// the periodic sweep deletes what a stopped replica left behind.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { pino } from "pino";
import { core } from "../../src/api/index.ts";
import { KINDS } from "../../src/config/index.ts";
import { WorkloadAutoRegistration } from "../../src/controllers/index.ts";
import { parseProxy } from "../../src/model/index.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeSource } from "../../src/sources/kube/index.ts";
import { type ConnectionInfo, TypeUrl, type XdsError } from "../../src/xds/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { type NodeInit, SotwClient } from "../support/ads-client.ts";
import { edsCluster, type Harness, startServer, waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();
/** Long enough to reconnect in, on a loaded machine. */
const GRACE_MS = 2000;

interface Entry {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
  };
  spec: Record<string, unknown>;
}

describe("WorkloadAutoRegistration", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let groupUid: string;
  let source: KubeSource;
  let store: ConfigStore;
  let controller: WorkloadAutoRegistration;
  /** With ISTIO_WORKLOAD_ENTRY_VALIDATE_IDENTITY at its default (on). */
  let checked: WorkloadAutoRegistration;
  let xds: Harness;
  const logged: string[] = [];
  const path = (kind: string, name = "") =>
    `/apis/networking.istio.io/v1/namespaces/${ns}/${kind}${name ? `/${name}` : ""}`;
  const entry = async (name: string) => {
    const res = await cluster.request("GET", path("workloadentries", name));
    return res.status === 404 ? undefined : (res.body as Entry);
  };
  const node = (group: string, ip = "10.1.2.3"): NodeInit => ({
    id: `sidecar~${ip}~vm-1.${ns}~${ns}.svc.cluster.local`,
    locality: { region: "r1", zone: "z1" },
    metadata: {
      NAMESPACE: ns,
      AUTO_REGISTER_GROUP: group,
      NETWORK: "net1",
      LABELS: { version: "v1", "istio-locality": "r1.z1", team: "proxy" },
    },
  });
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
    const group = await cluster.must("POST", path("workloadgroups"), {
      apiVersion: "networking.istio.io/v1",
      kind: "WorkloadGroup",
      metadata: { name: "vm", namespace: ns },
      spec: {
        metadata: { labels: { app: "vm", team: "group" }, annotations: { "example.com/note": "from-group" } },
        template: { serviceAccount: "vm-sa", ports: { http: 8080 }, labels: { tier: "template", team: "template" } },
      },
    });
    groupUid = (group.body as { metadata: { uid: string } }).metadata.uid;
    store = new ConfigStore();
    source = new KubeSource({
      kubeConfig: cluster.kubeConfig(),
      writer: store,
      kinds: KINDS.filter((k) => ["Namespace", "WorkloadEntry", "WorkloadGroup"].includes(k.kind)),
    });
    await source.start();
    await waitFor(
      () => store.get({ kind: "networking.istio.io/WorkloadGroup", namespace: ns, name: "vm" }) !== undefined,
      "the group in the store",
    );
    const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line).msg) });
    // The registration itself over plaintext: the identity check has tests of its own below.
    controller = new WorkloadAutoRegistration({
      store,
      target: source,
      instanceId: "sluiced-test",
      gracePeriodMs: GRACE_MS,
      validateIdentity: false,
      log,
    });
    checked = new WorkloadAutoRegistration({
      store,
      target: source,
      instanceId: "sluiced-test",
      gracePeriodMs: GRACE_MS,
    });
    xds = await startServer({ [TypeUrl.Cluster]: [edsCluster("a")] }, { connectionHooks: controller });
  });
  after(async () => {
    await xds?.close();
    controller?.stop();
    checked?.stop();
    source?.stop();
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
