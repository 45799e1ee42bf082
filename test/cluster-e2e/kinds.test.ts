// sluiced against the real cluster, end to end (issue 25): one valid object of every Istio and
// Gateway API kind of the registry (KINDS, families "istio" and "gateway-api", so a kind added there
// is covered here, or this test fails until it has a spec below), written through the API server in
// a fresh namespace at a version the cluster's CRD serves, then read by bin/sluiced.js with
// --kubeconfig: its /debug/configz lists every object, no problem is reported for any of them, and an
// update (spec and resourceVersion) and a deletion through the API are followed. The kinds istiod reads only
// with a flag on (KindInfo.feature) are read with every such flag on; the InferencePool CRD comes from the Go
// module cache (inferencePoolCrdFile).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { KINDS, type KindInfo, kindKey, parseApiVersion } from "../../src/config/kinds.ts";
import { type Cluster, clusterSkipReason, inferencePoolCrdFile, sharedCluster } from "../cluster/index.ts";
import { eventually, type Sluiced, skipOrFail, startSluiced } from "./mesh.ts";

type Obj = Record<string, unknown>;

/** What a spec needs to know: the namespace, the cluster-scoped GatewayClass's unique name. */
interface Ctx {
  ns: string;
  gatewayClass: string;
}

const NAME = "kinds";
const HOST = "kinds.example.com";
const GW = "gateway.networking.k8s.io";
const GWX = "gateway.networking.x-k8s.io";

/** The kinds this test covers: every Istio and Gateway API kind Sluice watches. */
const MESH_KINDS = KINDS.filter((k) => k.family === "istio" || k.family === "gateway-api");

const parentRefs = [{ group: GW, kind: "Gateway", name: NAME }];
const backendRefs = [{ name: NAME, port: 80 }];

/**
 * One minimal valid object body (everything but apiVersion, kind and metadata.namespace) per kind,
 * keyed by "group/Kind". A kind of KINDS missing here fails the test.
 */
const SPECS: Record<string, (c: Ctx) => Obj> = {
  "networking.istio.io/VirtualService": () => ({
    spec: { hosts: [HOST], http: [{ route: [{ destination: { host: HOST } }] }] },
  }),
  "networking.istio.io/DestinationRule": () => ({
    spec: { host: HOST, trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } } },
  }),
  "networking.istio.io/Gateway": () => ({
    spec: {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: [HOST] }],
    },
  }),
  "networking.istio.io/ServiceEntry": () => ({
    spec: {
      hosts: [HOST],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      location: "MESH_EXTERNAL",
      resolution: "DNS",
    },
  }),
  "networking.istio.io/Sidecar": () => ({ spec: { egress: [{ hosts: ["./*", "istio-system/*"] }] } }),
  "networking.istio.io/WorkloadEntry": () => ({
    spec: { address: "10.1.2.3", labels: { app: NAME }, serviceAccount: "default" },
  }),
  "networking.istio.io/WorkloadGroup": () => ({
    spec: { metadata: { labels: { app: NAME } }, template: { serviceAccount: "default" } },
  }),
  "networking.istio.io/EnvoyFilter": () => ({
    spec: {
      workloadSelector: { labels: { app: NAME } },
      configPatches: [
        {
          applyTo: "CLUSTER",
          match: { context: "SIDECAR_OUTBOUND" },
          patch: { operation: "MERGE", value: { connect_timeout: "2s" } },
        },
      ],
    },
  }),
  "networking.istio.io/ProxyConfig": () => ({ spec: { concurrency: 2 } }),
  "security.istio.io/AuthorizationPolicy": (c) => ({
    spec: { action: "ALLOW", rules: [{ from: [{ source: { namespaces: [c.ns] } }] }] },
  }),
  "security.istio.io/PeerAuthentication": () => ({ spec: { mtls: { mode: "STRICT" } } }),
  "security.istio.io/RequestAuthentication": () => ({
    spec: {
      selector: { matchLabels: { app: NAME } },
      jwtRules: [{ issuer: "https://issuer.example.com", jwksUri: "https://issuer.example.com/jwks.json" }],
    },
  }),
  "telemetry.istio.io/Telemetry": () => ({ spec: { tracing: [{ randomSamplingPercentage: 10 }] } }),
  "extensions.istio.io/WasmPlugin": () => ({
    spec: { selector: { matchLabels: { app: NAME } }, url: "oci://registry.example.com/plugin:v1", phase: "AUTHN" },
  }),
  "extensions.istio.io/TrafficExtension": () => ({
    spec: { selector: { matchLabels: { app: NAME } }, lua: { inlineCode: "function envoy_on_request(h) end" } },
  }),

  [`${GW}/GatewayClass`]: () => ({ spec: { controllerName: "istio.io/gateway-controller" } }),
  [`${GW}/Gateway`]: (c) => ({
    spec: { gatewayClassName: c.gatewayClass, listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  }),
  [`${GW}/HTTPRoute`]: () => ({
    spec: {
      parentRefs,
      hostnames: [HOST],
      rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs }],
    },
  }),
  [`${GW}/GRPCRoute`]: () => ({ spec: { parentRefs, hostnames: [HOST], rules: [{ backendRefs }] } }),
  [`${GW}/TCPRoute`]: () => ({ spec: { parentRefs, rules: [{ backendRefs }] } }),
  [`${GW}/TLSRoute`]: () => ({ spec: { parentRefs, hostnames: [HOST], rules: [{ backendRefs }] } }),
  [`${GW}/UDPRoute`]: () => ({ spec: { parentRefs, rules: [{ backendRefs }] } }),
  [`${GW}/ReferenceGrant`]: (c) => ({
    spec: { from: [{ group: GW, kind: "HTTPRoute", namespace: c.ns }], to: [{ group: "", kind: "Service" }] },
  }),
  [`${GW}/BackendTLSPolicy`]: () => ({
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: NAME }],
      validation: { hostname: HOST, wellKnownCACertificates: "System" },
    },
  }),
  [`${GW}/ListenerSet`]: () => ({
    spec: {
      parentRef: { group: GW, kind: "Gateway", name: NAME },
      listeners: [{ name: "extra", port: 8080, protocol: "HTTP" }],
    },
  }),
  [`${GWX}/XBackend`]: () => ({
    spec: { type: "ExternalHostname", externalHostname: { hostname: HOST }, port: { port: 443 }, protocol: "HTTP" },
  }),
  [`${GWX}/XBackendTrafficPolicy`]: () => ({
    spec: { targetRefs: [{ group: "", kind: "Service", name: NAME }], retryConstraint: { budget: { percent: 20 } } },
  }),
  "inference.networking.k8s.io/InferencePool": () => ({
    spec: {
      selector: { matchLabels: { app: NAME } },
      targetPorts: [{ number: 8000 }],
      endpointPickerRef: { name: `${NAME}-epp`, port: { number: 9002 } },
    },
  }),
};

/** Every flag that gates a kind, on. */
const KIND_FLAGS = Object.fromEntries(MESH_KINDS.flatMap((k) => (k.feature ? [[k.feature, "true"]] : [])));

/** The object of a kind as configz shows it. */
interface Listed {
  apiVersion: string;
  kind: string;
  metadata?: { namespace?: string; name?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: Obj;
}
interface Problem {
  kind: "ConfigProblem";
  source?: string;
  scope?: string;
  where?: string;
  message?: string;
}

/** One object this test wrote: its kind, the version it was written at, where it is. */
interface Written {
  info: KindInfo;
  key: string;
  version: string;
  namespace: string;
  name: string;
  path: string;
  resourceVersion: string;
}

const label = (w: Pick<Written, "key" | "namespace" | "name">) => `${w.key} ${w.namespace}/${w.name}`;

const collectionPath = (info: KindInfo, version: string, ns: string) =>
  `/apis/${info.group}/${version}/${info.namespaced ? `namespaces/${ns}/` : ""}${info.plural}`;

const { skip, missingOnCi } = skipOrFail(() => clusterSkipReason());

describe("sluiced on the real cluster: every Istio and Gateway API kind", { skip: skip ?? false }, () => {
  let cluster: Cluster;
  let ns: string;
  let ctx: Ctx;
  let sluiced: Sluiced;
  const written: Written[] = [];
  let startedAt = 0;

  const configz = async () => {
    const all = (await sluiced.debug("configz")) as (Listed | Problem)[];
    return {
      objects: all.filter((c): c is Listed => c.kind !== "ConfigProblem"),
      problems: all.filter((c): c is Problem => c.kind === "ConfigProblem"),
    };
  };
  const find = (objects: Listed[], w: Pick<Written, "key" | "namespace" | "name">) =>
    objects.find(
      (o) =>
        kindKey(parseApiVersion(o.apiVersion).group, o.kind) === w.key &&
        (o.metadata?.namespace ?? "") === w.namespace &&
        o.metadata?.name === w.name,
    );
  /** The problems that concern this test's objects (their namespace, or the GatewayClass). */
  const ours = (problems: Problem[]) =>
    problems.filter((p) => [p.scope, p.where, p.message].some((s) => s?.includes(ns) || s?.includes(ctx.gatewayClass)));
  const failure = (what: string) => `${what}\n--- sluiced:\n${sluiced?.tail(20) ?? "(not started)"}`;

  before(async () => {
    if (missingOnCi) throw missingOnCi;
    startedAt = Date.now();
    cluster = await sharedCluster();
    const inferenceCrd = inferencePoolCrdFile();
    assert.ok(inferenceCrd, "no gateway-api-inference-extension module in the Go module cache (npm run peers)");
    await cluster.installCrdFiles([inferenceCrd]);
    ns = await cluster.namespace("sluiced-kinds");
    ctx = { ns, gatewayClass: `sluice-kinds-${ns}` };
  });

  after(async () => {
    await sluiced?.stop();
    const gc = written.find((w) => !w.info.namespaced);
    if (gc) await cluster.request("DELETE", gc.path);
    if (ns) await cluster.deleteNamespace(ns, 0);
    await cluster?.stop();
  });

  it("has a spec for every Istio and Gateway API kind of KINDS", () => {
    const missing = MESH_KINDS.map((k) => kindKey(k.group, k.kind)).filter((key) => !(key in SPECS));
    assert.deepEqual(missing, [], `no spec in kinds.test.ts's SPECS for: ${missing.join(", ")}`);
    const extra = Object.keys(SPECS).filter((key) => !MESH_KINDS.some((k) => kindKey(k.group, k.kind) === key));
    assert.deepEqual(extra, [], `SPECS has kinds KINDS does not list: ${extra.join(", ")}`);
  });

  it("creates one object of each kind through the API server, at a version its CRD serves", async (t) => {
    const unserved: string[] = [];
    const refused: string[] = [];
    const notes: string[] = [];
    for (const info of MESH_KINDS) {
      const key = kindKey(info.group, info.kind);
      const spec = SPECS[key];
      if (!spec) continue; // reported by the test above
      const crd = await cluster.request(
        "GET",
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${info.plural}.${info.group}`,
      );
      if (crd.status !== 200) {
        unserved.push(`${key}: no CRD ${info.plural}.${info.group} (${crd.status})`);
        continue;
      }
      const served = (crd.body.spec.versions as { name: string; served: boolean }[])
        .filter((v) => v.served)
        .map((v) => v.name);
      // Sluice's preferred version if the cluster serves it, else the first of Sluice's the cluster serves.
      const version = [info.preferredVersion, ...info.versions].find((v) => served.includes(v));
      if (!version) {
        unserved.push(`${key}: the CRD serves ${served.join(",")}, Sluice reads ${info.versions.join(",")}`);
        continue;
      }
      const unknown = served.filter((v) => !info.versions.includes(v));
      if (version !== info.preferredVersion || unknown.length > 0)
        notes.push(`${key} at ${version} (served ${served.join(",")}; Sluice's ${info.versions.join(",")})`);
      const name = info.namespaced ? NAME : ctx.gatewayClass;
      const namespace = info.namespaced ? ns : "";
      const body = {
        apiVersion: `${info.group}/${version}`,
        kind: info.kind,
        ...spec(ctx),
        metadata: { name, ...(info.namespaced ? { namespace } : {}), labels: { "sluice.test/kinds": "true" } },
      };
      const collection = collectionPath(info, version, ns);
      const res = await cluster.request("POST", collection, body);
      if (res.status >= 300) {
        refused.push(`${key}: ${res.status} ${res.body?.message ?? res.text}`);
        continue;
      }
      written.push({
        info,
        key,
        version,
        namespace,
        name,
        path: `${collection}/${name}`,
        resourceVersion: res.body.metadata.resourceVersion,
      });
    }
    if (notes.length > 0) t.diagnostic(`versions: ${notes.join("; ")}`);
    assert.deepEqual(unserved, [], "kinds the cluster does not serve at a version Sluice reads");
    assert.deepEqual(refused, [], "the API server refused these objects");
    assert.equal(written.length, MESH_KINDS.length, "an object was created for every kind (see the first test)");
  });

  it("sluiced's configz lists every object, and reports no problem about them", async (t) => {
    assert.equal(written.length, MESH_KINDS.length, "every object was created");
    const spawnedAt = Date.now();
    sluiced = await startSluiced(cluster.kubeconfigPath, { env: KIND_FLAGS });
    let missing: string[] = written.map(label);
    let problems: Problem[] = [];
    try {
      await eventually(
        "configz to list every object",
        async () => {
          const now = await configz();
          missing = written.filter((w) => !find(now.objects, w)).map(label);
          problems = ours(now.problems);
          // Done when all are listed, or when each missing one has a problem reported (it will not come).
          const explained = missing.every((m) => problems.some((p) => p.scope === m));
          return { ok: missing.length === 0 || explained, seen: { missing, problems } };
        },
        45_000,
      );
    } catch (err) {
      assert.fail(
        failure(
          `sluiced's configz lacks ${missing.length} of ${written.length} objects: ${missing.join(", ")}; ` +
            `problems: ${JSON.stringify(problems)} (${(err as Error).message})`,
        ),
      );
    }
    assert.deepEqual(
      missing,
      [],
      failure(
        `sluiced's configz lacks ${missing.length} of ${written.length} objects; problems: ${JSON.stringify(problems)}`,
      ),
    );
    t.diagnostic(`every object in configz ${Date.now() - spawnedAt} ms after spawning sluiced`);
    // A moment for a problem reported after the object went in (status, analysis) to show.
    await new Promise((r) => setTimeout(r, 1000));
    const now = await configz();
    assert.deepEqual(ours(now.problems), [], failure("problems reported about this test's objects"));
    // What configz holds is what the API server stored, at the version Sluice reads.
    const stale: string[] = [];
    for (const w of written) {
      const got = find(now.objects, w);
      const { group, version } = parseApiVersion(got?.apiVersion ?? "");
      if (group !== w.info.group || !w.info.versions.includes(version)) stale.push(`${label(w)}: ${got?.apiVersion}`);
      if (got?.metadata?.labels?.["sluice.test/kinds"] !== "true")
        stale.push(`${label(w)}: labels ${JSON.stringify(got?.metadata?.labels)}`);
    }
    assert.deepEqual(stale, [], "objects as configz shows them");
  });

  it("follows an update of an Istio object and the deletion of a Gateway API one", async (t) => {
    assert.ok(sluiced, "sluiced runs");
    const byKey = (key: string) => {
      const w = written.find((x) => x.key === key);
      assert.ok(w, `${key} was created`);
      return w;
    };
    const dr = byKey("networking.istio.io/DestinationRule");
    const route = byKey(`${GW}/HTTPRoute`);
    const patched = await cluster.must(
      "PATCH",
      dr.path,
      { spec: { trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } } },
      { "content-type": "application/merge-patch+json" },
    );
    const newVersion = patched.body.metadata.resourceVersion as string;
    assert.notEqual(newVersion, dr.resourceVersion, "the update made a new resourceVersion");
    await cluster.must("DELETE", route.path);

    await eventually("configz to show the updated DestinationRule and drop the HTTPRoute", async () => {
      const { objects } = await configz();
      const got = find(objects, dr);
      const lb = (got?.spec?.trafficPolicy as { loadBalancer?: { simple?: string } } | undefined)?.loadBalancer?.simple;
      const gone = !find(objects, route);
      return {
        ok: lb === "LEAST_REQUEST" && got?.metadata?.resourceVersion === newVersion && gone,
        seen: {
          destinationRule: { loadBalancer: lb, resourceVersion: got?.metadata?.resourceVersion },
          httpRouteGone: gone,
        },
      };
    });
    // The rest is still there.
    const { objects, problems } = await configz();
    const missing = written.filter((w) => w !== route && !find(objects, w)).map(label);
    assert.deepEqual(missing, [], failure("objects lost after the update and the deletion"));
    assert.deepEqual(ours(problems), [], failure("problems after the update and the deletion"));
    t.diagnostic(`${((Date.now() - startedAt) / 1000).toFixed(1)} s from the cluster's attach to here`);
  });
});
