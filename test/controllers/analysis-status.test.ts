// The analysis status controller against a real API server (test/cluster), through the Kubernetes
// source and the store as sluiced runs it, with the real in-cluster analysis: the messages `sluice
// analyze` reports for an object land in its status.validationMessages, go when fixed, unchanged
// statuses are not written again, a burst of changes is analysed once, file-defined objects and
// non-Istio kinds get nothing written, and only the Lease's holder writes; and, when the peer istiod
// is built, istiod writes the same validationMessages for the same objects.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { inClusterAnalysis } from "../../src/analysis/index.ts";
import { ANALYZE_DEFAULTS, runAnalyzeCommand } from "../../src/cli/analyze-run.ts";
import { type ConfigObject, KINDS, kindKey } from "../../src/config/index.ts";
import { type AnalysisStatusTarget, AnalysisStatusWriter, LeaseElection } from "../../src/controllers/index.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeClient, KubeSource } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { peersSkipReason } from "../peers/paths.ts";
import { type IstiodBeside, startIstiodBeside } from "../support/istiod-beside.ts";
import { assertSameStatusWrites } from "../support/managed-fields.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();
const SELECT_LABEL = "sluice.test/analysis-status";
/** The kinds sluiced lists from a cluster (all but ServiceAccounts), read by the analysis. */
const ANALYSED = KINDS.filter((k) => k.kind !== "ServiceAccount");

interface Status {
  validationMessages?: { documentationUrl: string; level: string; type: { code: string } }[];
  observedGeneration?: string;
}
interface Stored {
  metadata: {
    resourceVersion: string;
    generation: number;
    managedFields?: { manager: string; operation: string; subresource?: string; fieldsV1?: unknown }[];
  };
  spec: Record<string, unknown>;
  status?: Status;
}

/** Istio objects of one namespace, read and written as the admin. */
function istioObjects(cluster: Cluster, namespace: string) {
  const path = (plural: string, name = "") =>
    `/apis/networking.istio.io/v1/namespaces/${namespace}/${plural}${name ? `/${name}` : ""}`;
  const get = async (plural: string, name: string) => (await cluster.must("GET", path(plural, name))).body as Stored;
  return {
    create: (kind: string, name: string, spec: Record<string, unknown>) =>
      cluster.must("POST", path(`${kind.toLowerCase()}s`), {
        apiVersion: "networking.istio.io/v1",
        kind,
        metadata: { name, namespace },
        spec,
      }),
    get,
    status: async (plural: string, name: string) => (await get(plural, name)).status,
    setSpec: async (plural: string, name: string, spec: Record<string, unknown>) => {
      const current = await get(plural, name);
      await cluster.must("PUT", path(plural, name), { ...current, spec });
    },
  };
}

const missingRoute = (host: string) => ({
  hosts: [host],
  gateways: ["no-such-gateway"],
  http: [{ route: [{ destination: { host: "no-such-service" } }] }],
});

/** The store, its Kubernetes source over the namespaces labelled `selection`, and the real analysis. */
async function sluiceSide(cluster: Cluster, selection: string) {
  const store = new ConfigStore({ sourceOrder: ["file", "kubernetes"] });
  const source = new KubeSource({
    kubeConfig: cluster.kubeConfig(),
    writer: store,
    discoverySelectors: [{ matchLabels: { [SELECT_LABEL]: selection } }],
    kinds: ANALYSED,
  });
  await source.start();
  const real = inClusterAnalysis(new Set(ANALYSED.map((k) => kindKey(k.group, k.kind))), "istio-system");
  let analyses = 0;
  const analysis = {
    kinds: real.kinds,
    analyze: (objects: readonly ConfigObject[]) => {
      analyses++;
      return real.analyze(objects);
    },
  };
  /** Counts the writes of one replica, made through the source. */
  const counting = () => {
    const target = {
      source: source.source,
      writes: [] as string[],
      writeStatus: (obj: ConfigObject, status: unknown) => {
        target.writes.push(`${obj.kind} ${obj.metadata.name}`);
        return source.writeStatus(obj, status);
      },
    };
    return target;
  };
  const controller = (target: AnalysisStatusTarget) =>
    new AnalysisStatusWriter({ store, target, analysis, quietMs: 50 });
  return { store, source, analysis, analyses: () => analyses, counting, controller };
}

describe("AnalysisStatusWriter", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let istio: ReturnType<typeof istioObjects>;
  let side: Awaited<ReturnType<typeof sluiceSide>>;
  let target: ReturnType<Awaited<ReturnType<typeof sluiceSide>>["counting"]>;
  let controller: AnalysisStatusWriter;
  const hasMessages = (name: string, count: number) => async () =>
    ((await istio.status("virtualservices", name))?.validationMessages ?? []).length === count;

  before(async () => {
    cluster = await sharedCluster();
    // The shared cluster holds other tests' config: select only this test's namespace.
    const selection = `analysis-${Date.now().toString(36)}`;
    ns = await cluster.namespace("analysis-status", { [SELECT_LABEL]: selection });
    istio = istioObjects(cluster, ns);
    // There before the controller starts.
    await istio.create("VirtualService", "early", missingRoute("early.example.com"));
    side = await sluiceSide(cluster, selection);
    target = side.counting();
    controller = side.controller(target);
    controller.start();
  });
  after(() => {
    controller?.stop();
    side?.source.stop();
  });

  test("a VirtualService to a missing gateway and host gets the messages sluice analyze reports", async () => {
    await waitFor(hasMessages("early", 3), "early's messages");
    const vs = await istio.get("virtualservices", "early");
    const message = (level: string, code: string) => ({
      documentationUrl: `https://istio.io/latest/docs/reference/config/analysis/${code.toLowerCase()}/`,
      level,
      type: { code },
    });
    // The gateway and the host not found, and the host not in the gateway's.
    assert.deepEqual(vs.status, {
      observedGeneration: String(vs.metadata.generation),
      validationMessages: [message("ERROR", "IST0101"), message("ERROR", "IST0101"), message("WARNING", "IST0132")],
    });
    // Written through the status subresource under istiod's field manager.
    assert.ok(
      (vs.metadata.managedFields ?? []).some((f) => f.manager === "pilot-discovery" && f.subresource === "status"),
      JSON.stringify(vs.metadata.managedFields),
    );
    // `sluice analyze` on the same cluster namespace: the same codes and levels for the object.
    let out = "";
    const code = await runAnalyzeCommand({
      ...ANALYZE_DEFAULTS,
      namespace: ns,
      istioNamespace: "istio-system",
      output: "json",
      cluster: new KubeClient(cluster.kubeConfig()),
      stdout: (text) => {
        out += text;
      },
      stderr: () => {},
    });
    assert.equal(code, 0);
    const printed = (JSON.parse(out) as { code: string; level: string; origin?: string; message: string }[]).filter(
      (m) => m.origin === `VirtualService ${ns}/early`,
    );
    assert.deepEqual(
      printed.map((m) => [m.code, m.level.toUpperCase()]),
      (vs.status?.validationMessages ?? []).map((m) => [m.type.code, m.level]),
    );
    assert.match(printed.map((m) => m.message).join("\n"), /Referenced gateway not found: "no-such-gateway"/);
  });

  test("fixing the object removes its messages; observedGeneration follows", async () => {
    await istio.create("VirtualService", "fixed", missingRoute("fixed.example.com"));
    await waitFor(hasMessages("fixed", 3), "fixed's messages");
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "reviews" },
      spec: { ports: [{ name: "http", port: 80 }], selector: { app: "reviews" } },
    });
    await istio.setSpec("virtualservices", "fixed", {
      hosts: ["reviews"],
      http: [{ route: [{ destination: { host: "reviews" } }] }],
    });
    await waitFor(hasMessages("fixed", 0), "fixed's messages removed");
    const vs = await istio.get("virtualservices", "fixed");
    assert.deepEqual(vs.status, { observedGeneration: String(vs.metadata.generation) });
    assert.equal(vs.metadata.generation, 2);
  });

  test("statuses that would not change are not written again", async () => {
    await waitFor(hasMessages("early", 3), "early's messages");
    await controller.settled();
    const versions = async () =>
      Promise.all(
        ["early", "fixed"].map(async (name) => (await istio.get("virtualservices", name)).metadata.resourceVersion),
      );
    const before = await versions();
    const writes = target.writes.length;
    const analyses = side.analyses();
    // A change the analysis reads that changes no Istio object's messages: a Service whose port name
    // follows no protocol gets a message (IST0118), but it is no Istio kind.
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "unrelated" },
      spec: { ports: [{ name: "foo", port: 80 }], selector: { app: "unrelated" } },
    });
    await waitFor(() => side.store.get({ kind: "/Service", namespace: ns, name: "unrelated" }) !== undefined, "it");
    await controller.settled();
    assert.ok(side.analyses() > analyses, "analysed again");
    assert.deepEqual(target.writes.slice(writes), []);
    assert.deepEqual(await versions(), before);
  });

  test("a burst of changes is analysed once; file-defined objects get no status written", async () => {
    await controller.settled();
    const analyses = side.analyses();
    const writes = target.writes.length;
    for (let i = 0; i < 5; i++) {
      side.store.upsert("file", {
        apiVersion: "networking.istio.io/v1",
        kind: "VirtualService",
        metadata: { name: `from-file-${i}`, namespace: ns, generation: 1 },
        spec: missingRoute(`file-${i}.example.com`),
      });
    }
    await controller.settled();
    assert.equal(side.analyses(), analyses + 1);
    assert.deepEqual(target.writes.slice(writes), []);
  });

  test("only the Lease's holder writes", async () => {
    const client = new KubeClient(cluster.kubeConfig());
    const replicas = ["replica-a", "replica-b"].map((identity) => {
      const replica = side.counting();
      const election = new LeaseElection({
        client,
        namespace: ns,
        name: "istio-analyze-leader",
        identity,
        run: (signal) => {
          const writer = side.controller(replica);
          writer.start();
          signal.addEventListener("abort", () => writer.stop());
        },
      });
      return { identity, replica, election };
    });
    const holder = async () => {
      const res = await cluster.request(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/istio-analyze-leader`,
      );
      return res.status === 200 ? (res.body.spec?.holderIdentity as string | undefined) : undefined;
    };
    const [a, b] = replicas;
    try {
      a.election.start();
      await waitFor(async () => (await holder()) === a.identity, "replica-a holding the Lease");
      b.election.start();
      await istio.create("VirtualService", "led", missingRoute("led.example.com"));
      await waitFor(hasMessages("led", 3), "led's messages");
      assert.ok(a.replica.writes.length > 0);
      assert.deepEqual(b.replica.writes, []);
      assert.equal(await holder(), a.identity);
    } finally {
      await Promise.all(replicas.map((r) => r.election.stop()));
    }
  });
});

const istiodSkip = skip ?? peersSkipReason("istiod");

// istiod (PILOT_ENABLE_ANALYSIS=true; it takes istio-analyze-leader in istio-system) and Sluice's
// controller side by side in one cluster of their own, each over a namespace of its own with the
// same objects: both write the same validationMessages.
describe("AnalysisStatusWriter against istiod", { skip: istiodSkip }, () => {
  let beside: IstiodBeside | undefined;
  let controller: AnalysisStatusWriter | undefined;
  let source: KubeSource | undefined;
  let sides: { istiod: ReturnType<typeof istioObjects>; sluice: ReturnType<typeof istioObjects> };

  before(async () => {
    beside = await startIstiodBeside({
      selectLabel: SELECT_LABEL,
      name: "analysis-status",
      env: { PILOT_ENABLE_ANALYSIS: "true" },
    });
    const { cluster, namespaces } = beside;
    sides = { istiod: istioObjects(cluster, namespaces.istiod), sluice: istioObjects(cluster, namespaces.sluice) };
    const side = await sluiceSide(cluster, "sluice");
    source = side.source;
    controller = side.controller(source);
    controller.start();
  });
  after(async () => {
    controller?.stop();
    source?.stop();
    await beside?.stop();
  });

  test("the same validationMessages for the same objects", async () => {
    for (const side of [sides.istiod, sides.sluice]) {
      await side.create("VirtualService", "missing", missingRoute("missing.example.com"));
      await side.create("Gateway", "unselected", {
        selector: { istio: "no-such-gateway" },
        servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
      });
    }
    const codes = async (side: ReturnType<typeof istioObjects>, plural: string, name: string) =>
      ((await side.status(plural, name))?.validationMessages ?? []).map((m) => `${m.level} ${m.type.code}`);
    for (const [plural, name] of [
      ["virtualservices", "missing"],
      ["gateways", "unselected"],
    ]) {
      const both = async () => Promise.all([codes(sides.sluice, plural, name), codes(sides.istiod, plural, name)]);
      // Each side analyses on its own time: wait until both have written something.
      await waitFor(async () => (await both()).every((list) => list.length > 0), `messages of ${name} on both sides`);
      const [sluice, istiod] = await both();
      assert.deepEqual(sluice, istiod, name);
    }
    // The documentation URL names istiod's version (v<minor>); Sluice links the latest.
    const url = (await sides.istiod.status("virtualservices", "missing"))?.validationMessages?.[0]?.documentationUrl;
    assert.match(url ?? "", /^https:\/\/istio\.io\/v[^/]+\/docs\/reference\/config\/analysis\/ist\d{4}\/$/);
    // Both write by an update of the status subresource (a PUT) under the user agent's command,
    // pilot-discovery (istiod run as Istio's image runs it), with the same fields.
    assertSameStatusWrites(
      await sides.istiod.get("virtualservices", "missing"),
      await sides.sluice.get("virtualservices", "missing"),
    );
    assert.equal((await sides.istiod.status("virtualservices", "missing"))?.observedGeneration, "1");
  });
});
