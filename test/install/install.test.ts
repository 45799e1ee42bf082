// `sluice install` against a real API server, and sluiced run as the ServiceAccount it installs: the
// rendered manifests (CRDs included) apply by server-side apply, twice; the ServiceAccount's token
// (TokenRequest) is all sluiced gets, and with it sluiced syncs, publishes the root certificate, patches
// its webhooks, elects leaders, writes Gateway API, Ingress and ServiceEntry status and the analysis
// messages of Istio config (the install enables analysis, global.istiod.enableAnalysis) and reviews a
// workload's token. The kinds istiod reads under a flag are read too (the install sets every such flag in
// pilot.env; the InferencePool CRD, which no install brings, comes from the Go module cache).
// The API server's audit log of the ServiceAccount's requests then proves the RBAC both sufficient
// (nothing refused: no 403) and minimal (every verb each rule grants was used, but for NOT_EXERCISED).
//
// The cluster is this test's own: it needs an audit log and starts without CRDs (the install brings them).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { credentials, Metadata } from "@grpc/grpc-js";
import { stringify } from "yaml";
import { caClientSigner } from "../../src/agent/certs-client.ts";
import { KINDS } from "../../src/config/index.ts";
import { inferencePoolServiceName } from "../../src/gatewayapi/index.ts";
import { installObjects, loadValues, Values } from "../../src/install/index.ts";
import { kindClient } from "../../src/library/kube.ts";
import { createCsr, generateKeyPair } from "../../src/security/ca/index.ts";
import { inCluster, KubeClient, loadKubeConfig } from "../../src/sources/kube/index.ts";
import { Cluster, clusterSkipReason, inferencePoolCrdFile, SERVICE_ACCOUNT_ISSUER } from "../cluster/index.ts";
import { type Sluiced, startSluiced } from "../cluster-e2e/mesh.ts";
import { GATED_BACKEND_REFS, gatedKindObjects } from "../gatewayapi/fixtures.ts";
import { SotwClient } from "../support/ads-client.ts";
import { freePort } from "../support/free-port.ts";

const skip = clusterSkipReason();
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const NS = "istio-system";
const SA_USER = `system:serviceaccount:${NS}:istiod`;
/** The install enables analysis, whose RBAC is granted only then. */
const ANALYSIS = "global.istiod.enableAnalysis=true";
/** Every istiod flag that gates a kind, on: their kinds' RBAC is granted only then. */
const KIND_FLAGS = [...new Set(KINDS.flatMap((kind) => (kind.feature ? [kind.feature] : [])))];
const SETTINGS = [ANALYSIS, ...KIND_FLAGS.map((flag) => `pilot.env.${flag}=true`)];
const SET_ARGS = SETTINGS.flatMap((setting) => ["--set", setting]);

/** Grants this run cannot use, each with the work that needs it. */
const NOT_EXERCISED: Readonly<Record<string, string>> = {
  [`core secrets update (in ${NS})`]:
    "the self-signed root's rotation rewrites istio-ca-secret, years after it was made",
};

interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestURI: string;
}

/** A server-side apply that made the object (201) was authorized as a create, the audit log says patch. */
const auditedVerb = (e: AuditEvent) => (e.verb === "patch" && e.responseStatus?.code === 201 ? "create" : e.verb);

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Polls `condition` every 200 ms until it holds; fails after `ms` with `what()`. */
async function waitFor(
  condition: () => boolean | Promise<boolean>,
  ms: number,
  what: () => string = () => "",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms:\n${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const sluice = (args: string[], kubeconfig: string) =>
  spawnSync(process.execPath, [SLUICE, ...args, "--kubeconfig", kubeconfig], { encoding: "utf8" });

describe("sluice install, and sluiced as its ServiceAccount", { skip }, () => {
  let dir: string;
  let cluster: Cluster;
  let auditLog: string;
  let sluiced: Sluiced | undefined;
  let app: string;
  const rules = { cluster: [] as Rule[], namespace: [] as Rule[] };

  const events = (): AuditEvent[] =>
    readFileSync(auditLog, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter((event) => event.user.username === SA_USER);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-install-"));
    auditLog = join(dir, "audit.log");
    const policy = join(dir, "audit-policy.yaml");
    writeFileSync(
      policy,
      stringify({
        apiVersion: "audit.k8s.io/v1",
        kind: "Policy",
        omitStages: ["RequestReceived"],
        rules: [{ level: "Metadata", users: [SA_USER] }, { level: "None" }],
      }),
    );
    cluster = await Cluster.start({
      crdDir: false,
      apiServerArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, "--audit-log-format=json"],
    });
    for (const object of installObjects(new Values(loadValues([], SETTINGS)), false)) {
      // istiod's own (its main role and the gateway controller's); the remote-secret reader's is another ServiceAccount's.
      if (object.kind === "ClusterRole" && object.metadata.name.startsWith("istiod-"))
        rules.cluster.push(...(object as unknown as { rules: Rule[] }).rules);
      if (object.kind === "Role" && object.metadata.name.startsWith("istiod"))
        rules.namespace = (object as unknown as { rules: Rule[] }).rules;
    }
  });

  after(async () => {
    await sluiced?.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("applies the rendered manifests, and again unchanged", async () => {
    const first = sluice(["install", ...SET_ARGS], cluster.kubeconfigPath);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^CustomResourceDefinition\/virtualservices.networking.istio.io applied$/m);
    assert.match(first.stdout, /^istio-system\/Deployment\/istiod applied$/m);
    assert.match(first.stdout, /✔ Sluice control plane installed: Deployment istio-system\/istiod\n$/);
    const again = sluice(["install", ...SET_ARGS], cluster.kubeconfigPath);
    assert.equal(again.status, 0, again.stderr);
    for (const path of [
      "/apis/apps/v1/namespaces/istio-system/deployments/istiod",
      "/api/v1/namespaces/istio-system/configmaps/istio-sidecar-injector",
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/istiod-default-validator",
      "/apis/rbac.authorization.k8s.io/v1/clusterroles/istiod-clusterrole-istio-system",
    ]) {
      const res = await cluster.request("GET", path);
      assert.equal(res.status, 200, path);
      assert.equal(res.body.metadata.managedFields[0].manager, "sluice-install", path);
    }
    // The CRDs must serve before sluiced lists their kinds.
    await waitFor(async () => {
      const res = await cluster.must("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
      const crds = res.body.items as { status?: { conditions?: { type: string; status: string }[] } }[];
      return (
        crds.length >= 28 &&
        crds.every((crd) => crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True"))
      );
    }, 60_000);
  });

  test("reads a pod's in-cluster credentials", async () => {
    const token = await serviceAccountToken("istiod", NS, SERVICE_ACCOUNT_ISSUER);
    const root = join(dir, "pod");
    const accountDir = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
    mkdirSync(accountDir, { recursive: true });
    writeFileSync(join(accountDir, "token"), token);
    writeFileSync(join(accountDir, "ca.crt"), cluster.pki.caPem);
    const port = new URL(cluster.url).port;
    const env = { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port };
    assert.equal(inCluster(env, root), true);
    assert.equal(inCluster({}, root), false);
    assert.equal(inCluster(env, join(dir, "not-a-pod")), false);
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    Object.assign(process.env, env);
    try {
      const client = new KubeClient(loadKubeConfig(undefined, root));
      const review = (await client.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "SelfSubjectReview",
      })) as { status: { userInfo: { username: string } } };
      assert.equal(review.status.userInfo.username, SA_USER);
    } finally {
      for (const [name, value] of [
        ["KUBERNETES_SERVICE_HOST", saved.host],
        ["KUBERNETES_SERVICE_PORT", saved.port],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test("sluiced as the ServiceAccount does all its work", async () => {
    app = await cluster.namespace("app");
    await createWorkloadsAndConfig(app);
    const token = await serviceAccountToken("istiod", NS, SERVICE_ACCOUNT_ISSUER);
    const kubeconfig = join(dir, "istiod.kubeconfig");
    writeFileSync(kubeconfig, tokenKubeconfig(token));
    const securePort = await freePort();
    sluiced = await startSluiced(kubeconfig, {
      secureGrpcAddr: `127.0.0.1:${securePort}`,
      httpsAddr: "127.0.0.1:0",
      env: {
        ...{ POD_NAMESPACE: NS, POD_NAME: "istiod-1", CLUSTER_ID: "Kubernetes", PILOT_ENABLE_ANALYSIS: "true" },
        // A VM's WorkloadEntry goes a second after it disconnects, within this test's wait.
        PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: "1s",
        ...Object.fromEntries(KIND_FLAGS.map((flag) => [flag, "true"])),
      },
    });
    const running = sluiced;
    const get = async (path: string) => (await cluster.request("GET", path)).body;
    // The root certificate, published and restored when edited.
    const rootPath = `/api/v1/namespaces/${app}/configmaps/istio-ca-root-cert`;
    await waitFor(async () => (await cluster.request("GET", rootPath)).status === 200, 60_000, running.tail);
    const root = (await get(rootPath)).data["root-cert.pem"] as string;
    await cluster.must(
      "PATCH",
      rootPath,
      { data: { "root-cert.pem": "edited" } },
      {
        "content-type": "application/merge-patch+json",
      },
    );
    await waitFor(async () => (await get(rootPath)).data["root-cert.pem"] === root, 60_000, running.tail);
    // A workload's certificate: its token reviewed by the API server.
    const rootFile = join(dir, "root-cert.pem");
    writeFileSync(rootFile, root);
    const tokenFile = join(dir, "workload-token");
    writeFileSync(tokenFile, await serviceAccountToken("default", app, "istio-ca"));
    const keys = await generateKeyPair("ECDSA-P256");
    const chain = await caClientSigner({
      address: `127.0.0.1:${securePort}`,
      rootCertPath: rootFile,
      serverName: "istiod.istio-system.svc",
      tokenPath: tokenFile,
    })(await createCsr(keys, [`spiffe://cluster.local/ns/${app}/sa/default`]), 3600);
    assert.ok(chain.length >= 1);
    // A VM auto-registering over the TLS port with its ServiceAccount's token: its WorkloadEntry made,
    // marked disconnected and deleted.
    await cluster.must("POST", `/apis/networking.istio.io/v1/namespaces/${app}/workloadgroups`, {
      apiVersion: "networking.istio.io/v1",
      kind: "WorkloadGroup",
      metadata: { name: "vm" },
      spec: { template: { serviceAccount: "vm-sa" } },
    });
    const vmToken = await serviceAccountToken("vm-sa", app, "istio-ca");
    const vm = SotwClient.connect(
      `127.0.0.1:${securePort}`,
      credentials.combineChannelCredentials(
        credentials.createSsl(Buffer.from(root), null, null, { checkServerIdentity: () => undefined }),
        credentials.createFromMetadataGenerator((_params, callback) => {
          const metadata = new Metadata();
          metadata.set("authorization", `Bearer ${vmToken}`);
          callback(null, metadata);
        }),
      ),
    );
    const entryPathVm = `/apis/networking.istio.io/v1/namespaces/${app}/workloadentries/vm-10.9.9.9`;
    vm.request({
      node: {
        id: `sidecar~10.9.9.9~vm-1.${app}~${app}.svc.cluster.local`,
        metadata: { NAMESPACE: app, AUTO_REGISTER_GROUP: "vm", CLUSTER_ID: "Kubernetes" },
      },
      typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    });
    // Answered only once the entry is registered (the connect comes first).
    await vm.next();
    assert.equal((await cluster.request("GET", entryPathVm)).status, 200);
    // Its health report, in the entry's status.
    vm.request({ typeUrl: "type.googleapis.com/istio.v1.HealthInformation" });
    await waitFor(
      async () =>
        ((await get(entryPathVm)).status?.conditions ?? []).some((c: { type: string }) => c.type === "Healthy"),
      60_000,
      running.tail,
    );
    vm.close();
    await waitFor(async () => (await cluster.request("GET", entryPathVm)).status === 404, 60_000, running.tail);
    // The webhooks' caBundle.
    await waitFor(
      async () =>
        Boolean(
          (await get("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/istio-sidecar-injector"))
            .webhooks[0].clientConfig.caBundle,
        ),
      60_000,
      running.tail,
    );
    // The Gateway's deployment.
    for (const path of [
      `/apis/apps/v1/namespaces/${app}/deployments/gateway-istio`,
      `/apis/autoscaling/v2/namespaces/${app}/horizontalpodautoscalers/gateway-istio`,
      `/apis/policy/v1/namespaces/${app}/poddisruptionbudgets/gateway-istio`,
      `/api/v1/namespaces/${app}/services/gateway-istio`,
      `/api/v1/namespaces/${app}/serviceaccounts/gateway-istio`,
    ]) {
      await waitFor(async () => (await cluster.request("GET", path)).status === 200, 60_000, running.tail);
    }
    // Gateway API and Ingress status.
    for (const path of [
      "/apis/gateway.networking.k8s.io/v1/gatewayclasses/istio",
      `/apis/gateway.networking.k8s.io/v1/namespaces/${app}/gateways/gateway`,
    ]) {
      await waitFor(async () => ((await get(path)).status?.conditions ?? []).length > 0, 60_000, running.tail);
    }
    for (const kind of ["httproutes", "grpcroutes"]) {
      const path = `/apis/gateway.networking.k8s.io/v1/namespaces/${app}/${kind}/route`;
      await waitFor(async () => ((await get(path)).status?.parents ?? []).length > 0, 60_000, running.tail);
    }
    // The kinds under flags: XBackend parents, the traffic policy's ancestors, the pool's parents, and the
    // pool's shadow Service.
    const shadow = `/api/v1/namespaces/${app}/services/${inferencePoolServiceName("pool")}`;
    await waitFor(async () => (await cluster.request("GET", shadow)).status === 200, 60_000, running.tail);
    for (const [path, list] of [
      [`/apis/gateway.networking.x-k8s.io/v1alpha1/namespaces/${app}/xbackends/external`, "parents"],
      [`/apis/gateway.networking.x-k8s.io/v1alpha1/namespaces/${app}/xbackendtrafficpolicies/web`, "ancestors"],
      [`/apis/inference.networking.k8s.io/v1/namespaces/${app}/inferencepools/pool`, "parents"],
    ]) {
      await waitFor(async () => ((await get(path)).status?.[list] ?? []).length > 0, 60_000, running.tail);
    }
    const entryPath = `/apis/networking.istio.io/v1/namespaces/${app}/serviceentries/external`;
    await waitFor(async () => ((await get(entryPath)).status?.addresses ?? []).length > 0, 60_000, running.tail);
    const ingressPath = `/apis/networking.k8s.io/v1/namespaces/${app}/ingresses/web`;
    await waitFor(
      async () => ((await get(ingressPath)).status?.loadBalancer?.ingress ?? []).length > 0,
      60_000,
      running.tail,
    );
    // Analysis messages in the status of an object of each Istio API group.
    for (const path of [
      `/apis/networking.istio.io/v1/namespaces/${app}/virtualservices/missing`,
      `/apis/security.istio.io/v1/namespaces/${app}/authorizationpolicies/unselected`,
      `/apis/telemetry.istio.io/v1/namespaces/${app}/telemetries/unselected`,
      `/apis/extensions.istio.io/v1alpha1/namespaces/${app}/wasmplugins/on-gateway`,
    ]) {
      await waitFor(async () => ((await get(path)).status?.validationMessages ?? []).length > 0, 60_000, running.tail);
    }
    // Every verb the RBAC grants shows up in the audit log (leases are renewed a few seconds on).
    await waitFor(
      () => unusedGrants(events()).length === 0,
      90_000,
      () => unusedGrants(events()).join("\n"),
    );
  });

  test("nothing sluiced asked for was refused, and every verb granted was used", () => {
    const mine = events();
    assert.ok(mine.length > 50, `${mine.length} audited requests`);
    const refused = mine.filter((event) => event.responseStatus?.code === 403).map((e) => `${e.verb} ${e.requestURI}`);
    assert.deepEqual(refused, []);
    assert.deepEqual(unusedGrants(mine), []);
    assert.doesNotMatch(sluiced?.tail(400) ?? "", /forbidden/i);
  });

  /** `group resource verb` of each grant no audited request used (Role grants: in the control plane's namespace). */
  function unusedGrants(audited: AuditEvent[]): string[] {
    const unused: string[] = [];
    const check = (rule: Rule, namespaced: boolean) => {
      for (const group of rule.apiGroups) {
        for (const resource of rule.resources) {
          const [name, subresource] = resource.split("/");
          for (const verb of rule.verbs) {
            const used = audited.some(
              (e) =>
                auditedVerb(e) === verb &&
                (e.objectRef?.apiGroup ?? "") === group &&
                (name === "*" || e.objectRef?.resource === name) &&
                (e.objectRef?.subresource ?? undefined) === subresource &&
                (!namespaced || e.objectRef?.namespace === NS) &&
                // Authorized, whatever came of it (a GET of a Secret not yet made answers 404).
                e.responseStatus?.code !== 403,
            );
            const grant = `${group || "core"} ${resource} ${verb}${namespaced ? ` (in ${NS})` : ""}`;
            if (!used && !(grant in NOT_EXERCISED)) unused.push(grant);
          }
        }
      }
    };
    for (const rule of rules.cluster) check(rule, false);
    for (const rule of rules.namespace) check(rule, true);
    return unused;
  }

  /** A route to a gateway and host that do not exist, policies selecting no workload or a gateway's. */
  async function createIstioConfigWithMessages(ns: string): Promise<void> {
    const create = (apiVersion: string, plural: string, name: string, spec: unknown) =>
      cluster.must("POST", `/apis/${apiVersion}/namespaces/${ns}/${plural}`, {
        apiVersion,
        kind: {
          virtualservices: "VirtualService",
          authorizationpolicies: "AuthorizationPolicy",
          telemetries: "Telemetry",
          wasmplugins: "WasmPlugin",
        }[plural],
        metadata: { name },
        spec,
      });
    const nowhere = { matchLabels: { app: "no-such-workload" } };
    await create("networking.istio.io/v1", "virtualservices", "missing", {
      hosts: ["missing.example.com"],
      gateways: ["no-such-gateway"],
      http: [{ route: [{ destination: { host: "no-such-service" } }] }],
    });
    await create("security.istio.io/v1", "authorizationpolicies", "unselected", { selector: nowhere });
    await create("telemetry.istio.io/v1", "telemetries", "unselected", { selector: nowhere });
    // A selector on a Gateway API gateway's pod has no effect there (a targetRef is needed).
    await cluster.must("POST", `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "gateway-istio", labels: { "gateway.networking.k8s.io/gateway-name": "gateway" } },
      spec: { containers: [{ name: "istio-proxy", image: "proxyv2" }] },
    });
    await create("extensions.istio.io/v1alpha1", "wasmplugins", "on-gateway", {
      selector: { matchLabels: { "gateway.networking.k8s.io/gateway-name": "gateway" } },
      url: "oci://example.com/filter:v1",
    });
  }

  /** The kinds istiod reads under a flag, their InferencePool CRD first (no install brings it). */
  async function createGatedKinds(ns: string): Promise<void> {
    const crd = inferencePoolCrdFile();
    assert.ok(crd, "no gateway-api-inference-extension module in the Go module cache (npm run peers)");
    await cluster.installCrdFiles([crd]);
    for (const obj of gatedKindObjects(ns))
      await kindClient(cluster.kubeConfig(), obj.apiVersion, obj.kind).create(obj);
  }

  async function serviceAccountToken(name: string, namespace: string, audience: string): Promise<string> {
    if ((await cluster.request("GET", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}`)).status === 404) {
      await cluster.must("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name },
      });
    }
    const res = await cluster.must("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: [audience], expirationSeconds: 3600 },
    });
    return res.body.status.token as string;
  }

  function tokenKubeconfig(token: string): string {
    return stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "test",
          cluster: {
            server: cluster.url,
            "certificate-authority-data": Buffer.from(cluster.pki.caPem).toString("base64"),
          },
        },
      ],
      users: [{ name: "istiod", user: { token } }],
      contexts: [{ name: "istiod", context: { cluster: "test", user: "istiod" } }],
      "current-context": "istiod",
    });
  }

  /**
   * What makes every controller write: Gateway API objects, a ServiceEntry, an Ingress of class istio and
   * its gateway Service, and Istio config of each API group the analyzers have something to say about.
   */
  async function createWorkloadsAndConfig(ns: string): Promise<void> {
    const gw = "/apis/gateway.networking.k8s.io/v1";
    // The GatewayClass istio is sluiced's to create.
    // Its deployment is made with an autoscaler and a disruption budget, which only an overlay asks for.
    await cluster.must("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "gateway-options" },
      data: { horizontalPodAutoscaler: "spec:\n  minReplicas: 1\n", podDisruptionBudget: "spec:\n  minAvailable: 1\n" },
    });
    await cluster.must("POST", `${gw}/namespaces/${ns}/gateways`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gateway" },
      spec: {
        gatewayClassName: "istio",
        infrastructure: { parametersRef: { group: "", kind: "ConfigMap", name: "gateway-options" } },
        listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
      },
    });
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { ports: [{ name: "http", port: 80 }], selector: { app: "web" } },
    });
    await createGatedKinds(ns);
    for (const kind of ["HTTPRoute", "GRPCRoute"]) {
      // The HTTPRoute also routes to the XBackend and the InferencePool, which gives them their parents.
      const backendRefs = [{ name: "web", port: 80 }, ...(kind === "HTTPRoute" ? GATED_BACKEND_REFS : [])];
      await cluster.must("POST", `${gw}/namespaces/${ns}/${kind.toLowerCase()}s`, {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind,
        metadata: { name: "route" },
        spec: { parentRefs: [{ name: "gateway" }], rules: [{ backendRefs }] },
      });
    }
    await cluster.must("POST", `/apis/networking.istio.io/v1/namespaces/${ns}/serviceentries`, {
      apiVersion: "networking.istio.io/v1",
      kind: "ServiceEntry",
      metadata: { name: "external" },
      spec: { hosts: ["api.example.com"], ports: [{ number: 443, name: "tls", protocol: "TLS" }], resolution: "DNS" },
    });
    await createIstioConfigWithMessages(ns);
    const lb = await cluster.must("POST", `/api/v1/namespaces/${NS}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "istio-ingressgateway", labels: { istio: "ingressgateway" } },
      spec: { type: "LoadBalancer", ports: [{ name: "http2", port: 80 }], selector: { istio: "ingressgateway" } },
    });
    await cluster.must("PUT", `/api/v1/namespaces/${NS}/services/istio-ingressgateway/status`, {
      ...lb.body,
      status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } },
    });
    await cluster.must("POST", `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "web", annotations: { "kubernetes.io/ingress.class": "istio" } },
      spec: {
        rules: [
          {
            host: "web.example.com",
            http: {
              paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
            },
          },
        ],
      },
    });
  }
});
