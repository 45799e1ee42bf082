// The Gateway deployment controller against a real API server (test/cluster), through the Kubernetes
// source and the store as sluiced runs it: what a Gateway of class istio gets, kept as it was made,
// overlays, what is left alone; and, when the peer istiod and istioctl are built, the objects istiod
// makes for the same Gateway, step by step, compared field by field (and field manager by field manager).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { parseAllDocuments } from "yaml";
import { type ConfigObject, DEFAULT_MESH_CONFIG, KINDS, MeshWatcher } from "../../src/config/index.ts";
import { GatewayClassCreator, GatewayDeploymentController, TagWatcher } from "../../src/controllers/index.ts";
import { GatewayStatusWriter } from "../../src/gatewayapi/status-writer.ts";
import { storeGatewayConversion, storeRegistry } from "../../src/model/store-push.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeClient, KubeSource } from "../../src/sources/kube/index.ts";
import { InjectionSettingsWatcher } from "../../src/webhooks/inject/injector-config.ts";
import { Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";
import { type IstiodBeside, startIstiodBeside } from "../support/istiod-beside.ts";
import { pointTag, tagWebhookPath } from "../support/revision-tags.ts";

const skip = clusterSkipReason();
const SELECT_LABEL = "sluice.test/gateway-deployment";
const GW = "/apis/gateway.networking.k8s.io/v1";
const WATCHED = ["Namespace", "Gateway", "GatewayClass", "ListenerSet", "ConfigMap", "Service", "ProxyConfig"];

type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string }[];
    managedFields?: { manager: string; operation: string; subresource?: string; fieldsV1?: unknown; time?: string }[];
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
};

/** Polls `condition` every 100 ms until it holds; fails after 60 s saying `what`. */
async function waitUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** The paths of what a Gateway's deployment is made of, in one namespace. */
const madePaths = (ns: string, name: string) => ({
  serviceAccount: `/api/v1/namespaces/${ns}/serviceaccounts/${name}`,
  deployment: `/apis/apps/v1/namespaces/${ns}/deployments/${name}`,
  service: `/api/v1/namespaces/${ns}/services/${name}`,
  autoscaler: `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/${name}`,
  disruptionBudget: `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`,
});

function gateway(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", metadata: { name, ...metadata }, spec };
}

/** A Gateway whose deployment is tuned by the ConfigMap tuned-options. */
const TUNED_GATEWAY = gateway("tuned", {
  gatewayClassName: "istio",
  infrastructure: { parametersRef: { group: "", kind: "ConfigMap", name: "tuned-options" } },
  listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
});

/** Ambient's features, on Sluice's side. */
type AmbientOptions = { ambientWaypoints?: boolean; ambientMultiNetwork?: boolean };

/** The store and the controller as sluiced runs them, over the namespaces labelled `selection`. */
function sluiceController(
  cluster: Cluster,
  selection: string,
  systemNamespace: string,
  injection?: InjectionSettingsWatcher,
  ambient: AmbientOptions = {},
) {
  const store = new ConfigStore();
  const kubeConfig = cluster.kubeConfig();
  const source = new KubeSource({
    kubeConfig,
    writer: store,
    discoverySelectors: [{ matchLabels: { [SELECT_LABEL]: selection } }],
    kinds: KINDS.filter((k) => WATCHED.includes(k.kind)),
  });
  const meshes = new MeshWatcher();
  const settings =
    injection ??
    new InjectionSettingsWatcher(
      { config: undefined, values: undefined },
      { from: { config: "defaults", values: "defaults" }, revision: "", log: pino({ level: "silent" }) },
    );
  const tags = new TagWatcher({ client: new KubeClient(kubeConfig), revision: "default", systemNamespace });
  const controller = new GatewayDeploymentController({
    client: new KubeClient(kubeConfig),
    store,
    source: source.source,
    mesh: () => meshes.mesh,
    onMeshChange: (listener) => meshes.onChange(listener),
    injection: () => settings.settings,
    onInjectionChange: (listener) => settings.onChange(listener),
    revision: "default",
    tags,
    systemNamespace,
    clusterId: "Kubernetes",
    ...ambient,
  });
  return {
    async start() {
      tags.start();
      await source.start();
      await tags.synced;
      controller.start();
    },
    settled: () => controller.settled(),
    stop() {
      controller.stop();
      tags.stop();
      source.stop();
    },
  };
}

describe("GatewayDeploymentController", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let system: string;
  let controller: ReturnType<typeof sluiceController>;
  const get = async (path: string) => (await cluster.must("GET", path)).body as KubeObject;
  const exists = async (path: string) => (await cluster.request("GET", path)).status === 200;

  before(async () => {
    cluster = await sharedCluster();
    const selection = `gwd-${Date.now().toString(36)}`;
    ns = await cluster.namespace("gateway-deployment", { [SELECT_LABEL]: selection });
    system = await cluster.namespace("gateway-deployment-system", { [SELECT_LABEL]: selection });
    controller = sluiceController(cluster, selection, system);
    await controller.start();
  });
  after(() => controller?.stop());

  test("a Gateway of class istio gets its ServiceAccount, Deployment and Service, owned by it", async () => {
    const created = (
      await cluster.must(
        "POST",
        `${GW}/namespaces/${ns}/gateways`,
        gateway(
          "web",
          {
            gatewayClassName: "istio",
            listeners: [
              { name: "http", port: 80, protocol: "HTTP" },
              { name: "https.example.com", port: 443, protocol: "HTTPS", tls: { certificateRefs: [{ name: "cert" }] } },
              { name: "http-again", port: 80, protocol: "HTTP", hostname: "again.example.com" },
            ],
          },
          { labels: { team: "web" }, annotations: { "example.com/note": "kept" } },
        ),
      )
    ).body as KubeObject;
    const paths = madePaths(ns, "web-istio");
    await waitUntil(async () => (await exists(paths.serviceAccount)) && (await exists(paths.service)), "web-istio");
    await waitUntil(() => exists(paths.deployment), "the Deployment");
    const [sa, deployment, service] = await Promise.all([
      get(paths.serviceAccount),
      get(paths.deployment),
      get(paths.service),
    ]);
    for (const object of [sa, deployment, service]) {
      assert.deepEqual(
        object.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]),
        [["Gateway", "web", created.metadata.uid]],
      );
      assert.equal(object.metadata.labels?.["gateway.networking.k8s.io/gateway-name"], "web");
      assert.equal(object.metadata.labels?.["gateway.istio.io/managed"], "istio.io-gateway-controller");
      // The Gateway's labels and annotations are copied.
      assert.equal(object.metadata.labels?.team, "web");
      assert.equal(object.metadata.annotations?.["example.com/note"], "kept");
      assert.ok(
        object.metadata.managedFields?.some(
          (f) => f.manager === "istio.io/gateway-controller" && f.operation === "Apply",
        ),
      );
    }
    const spec = service.spec as { type: string; ports: { name: string; port: number; appProtocol: string }[] };
    assert.equal(spec.type, "LoadBalancer");
    // One port per listener port; a dotted listener name made a port name.
    assert.deepEqual(
      spec.ports.map((p) => [p.name, p.port, p.appProtocol]),
      [
        ["status-port", 15021, "tcp"],
        ["http", 80, "http"],
        ["https-example-com", 443, "https"],
      ],
    );
    const template = (
      deployment.spec as {
        template: { spec: { serviceAccountName: string; containers: { name: string; args: string[] }[] } };
      }
    ).template;
    assert.equal(template.spec.serviceAccountName, "web-istio");
    assert.equal(template.spec.containers[0].name, "istio-proxy");
    assert.deepEqual(template.spec.containers[0].args.slice(0, 2), ["proxy", "router"]);
    // The controller says it manages the Gateway, through the status subresource as istiod does, where the
    // API server keeps only the record of the write (a custom resource's status takes no metadata).
    await waitUntil(async () => {
      const gw = await get(`${GW}/namespaces/${ns}/gateways/web`);
      return Boolean(
        gw.metadata.managedFields?.some(
          (f) => f.manager === "istio.io/gateway-controller" && f.subresource === "status",
        ),
      );
    }, "the controller version written");
  });

  test("what it made is put back when changed or deleted", async () => {
    const paths = madePaths(ns, "web-istio");
    await waitUntil(() => exists(paths.service), "web-istio");
    await cluster.must("DELETE", paths.service);
    await waitUntil(() => exists(paths.service), "the Service made again");
    await cluster.must(
      "PATCH",
      paths.deployment,
      { metadata: { labels: { "gateway.networking.k8s.io/gateway-class-name": "changed" } } },
      { "content-type": "application/merge-patch+json" },
    );
    await waitUntil(
      async () =>
        (await get(paths.deployment)).metadata.labels?.["gateway.networking.k8s.io/gateway-class-name"] === "istio",
      "the Deployment's label put back",
    );
  });

  test("an object of the same name that it did not make is left alone", async () => {
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "mine-istio" },
      spec: { ports: [{ name: "http", port: 8080 }], selector: { app: "mine" } },
    });
    await cluster.must(
      "POST",
      `${GW}/namespaces/${ns}/gateways`,
      gateway("mine", { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
    );
    const paths = madePaths(ns, "mine-istio");
    await waitUntil(() => exists(paths.deployment), "mine-istio's Deployment");
    await controller.settled();
    const service = await get(paths.service);
    assert.equal(service.metadata.labels?.["gateway.istio.io/managed"], undefined);
    assert.deepEqual(
      (service.spec as { ports: { port: number }[] }).ports.map((p) => p.port),
      [8080],
    );
  });

  test("class defaults and the Gateway's parameters ConfigMap are laid over, in that order", async () => {
    await cluster.must("POST", `/api/v1/namespaces/${system}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "istio-defaults", labels: { "gateway.istio.io/defaults-for-class": "istio" } },
      data: { deployment: "spec:\n  replicas: 2\n", service: "spec:\n  type: ClusterIP\n" },
    });
    await cluster.must("POST", `${GW}/namespaces/${ns}/gateways`, TUNED_GATEWAY);
    const paths = madePaths(ns, "tuned-istio");
    // The ConfigMap it names does not exist yet: nothing is made.
    await controller.settled();
    assert.equal(await exists(paths.deployment), false);
    await cluster.must("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "tuned-options" },
      data: {
        deployment: "spec:\n  replicas: 3\n",
        horizontalPodAutoscaler: "spec:\n  minReplicas: 2\n  maxReplicas: 4\n",
      },
    });
    await waitUntil(async () => (await exists(paths.deployment)) && (await exists(paths.autoscaler)), "tuned-istio");
    assert.equal((await get(paths.deployment)).spec?.replicas, 3);
    assert.equal((await get(paths.service)).spec?.type, "ClusterIP");
    const hpa = (await get(paths.autoscaler)).spec as { minReplicas: number; maxReplicas: number };
    assert.deepEqual([hpa.minReplicas, hpa.maxReplicas], [2, 4]);
    // No overlay asked for a disruption budget.
    assert.equal(await exists(paths.disruptionBudget), false);
  });

  test("other classes, a waypoint without ambient, and a Gateway naming an existing deployment by hostname, get nothing", async () => {
    await cluster.must(
      "POST",
      `${GW}/namespaces/${ns}/gateways`,
      gateway("theirs", { gatewayClassName: "other", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
    );
    await cluster.must(
      "POST",
      `${GW}/namespaces/${ns}/gateways`,
      gateway("wp", {
        gatewayClassName: "istio-waypoint",
        listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }],
      }),
    );
    await cluster.must(
      "POST",
      `${GW}/namespaces/${ns}/gateways`,
      gateway("existing", {
        gatewayClassName: "istio",
        addresses: [{ type: "Hostname", value: "ingress.example.com" }],
        listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
      }),
    );
    // A later Gateway made shows the earlier ones were looked at.
    await cluster.must(
      "POST",
      `${GW}/namespaces/${ns}/gateways`,
      gateway("later", { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
    );
    await waitUntil(() => exists(madePaths(ns, "later-istio").deployment), "later-istio");
    await controller.settled();
    assert.equal(await exists(madePaths(ns, "theirs-other").deployment), false);
    assert.equal(await exists(madePaths(ns, "wp").deployment), false);
    assert.equal(await exists(madePaths(ns, "existing-istio").deployment), false);
  });

  test("a Gateway labelled with a tag is deployed once the tag names this revision", async () => {
    // A tag of its own (cluster-wide webhook configurations are shared by every test), first
    // naming another revision: the Gateway labelled with it is not this revision's.
    const tagName = `gwd-${Date.now().toString(36)}`;
    await pointTag(cluster, tagName, "other");
    try {
      await cluster.must(
        "POST",
        `${GW}/namespaces/${ns}/gateways`,
        gateway(
          "tagged",
          { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
          { labels: { "istio.io/rev": tagName } },
        ),
      );
      // Another revision's: a Gateway made after it is deployed, it is not.
      await cluster.must(
        "POST",
        `${GW}/namespaces/${ns}/gateways`,
        gateway("after-tagged", {
          gatewayClassName: "istio",
          listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
        }),
      );
      await waitUntil(() => exists(madePaths(ns, "after-tagged-istio").deployment), "after-tagged-istio");
      await controller.settled();
      assert.equal(await exists(madePaths(ns, "tagged-istio").deployment), false);
      // The tag moved to this revision: every Gateway is looked at again, and this one is deployed.
      await pointTag(cluster, tagName, "default");
      await waitUntil(() => exists(madePaths(ns, "tagged-istio").deployment), "tagged-istio");
    } finally {
      await cluster.request("DELETE", tagWebhookPath(tagName));
    }
  });
});

/** The GatewayClass creator over a store of the cluster's classes, as sluiced runs it. */
function classCreator(cluster: Cluster, remoteClass = true, ambient: AmbientOptions = {}) {
  const store = new ConfigStore();
  const kubeConfig = cluster.kubeConfig();
  const source = new KubeSource({ kubeConfig, writer: store, kinds: KINDS.filter((k) => k.kind === "GatewayClass") });
  const creator = new GatewayClassCreator({
    client: new KubeClient(kubeConfig),
    store,
    source: source.source,
    remoteClass,
    waypointClass: ambient.ambientWaypoints,
    eastWestClass: ambient.ambientMultiNetwork,
  });
  return {
    async start() {
      await source.start();
      creator.start();
    },
    settled: () => creator.settled(),
    stop() {
      creator.stop();
      source.stop();
    },
  };
}

const BUILTIN_CLASSES = ["istio", "istio-remote"];
/** The built-in classes with ambient's on as `ambient` says. */
const builtinClasses = (ambient: AmbientOptions) => [
  ...BUILTIN_CLASSES,
  ...(ambient.ambientWaypoints ? ["istio-waypoint"] : []),
  ...(ambient.ambientMultiNetwork ? ["istio-east-west"] : []),
];
const classPath = (name: string) => `${GW}/gatewayclasses/${name}`;

/** The specs of the built-in classes, once both exist. */
async function builtinClassSpecs(cluster: Cluster, names = BUILTIN_CLASSES): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await waitUntil(async () => {
    for (const name of names) {
      const answer = await cluster.request("GET", classPath(name));
      if (answer.status !== 200) return false;
      out[name] = (answer.body as KubeObject).spec;
    }
    return true;
  }, "the built-in GatewayClasses");
  return out;
}

/** Who created each built-in class, as managedFields record it (the main resource's, without times). */
async function builtinClassWriters(cluster: Cluster, names = BUILTIN_CLASSES): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const { metadata } = (await cluster.must("GET", classPath(name))).body as KubeObject;
    out[name] = (metadata.managedFields ?? [])
      .filter((f) => f.subresource === undefined)
      .map(({ time: _time, ...rest }) => rest);
  }
  return out;
}

// GatewayClasses are cluster-wide: a cluster of their own.
describe("GatewayClassCreator", { skip }, () => {
  let cluster: Cluster;
  let creator: ReturnType<typeof classCreator> | undefined;

  before(async () => {
    cluster = await Cluster.start();
  });
  after(async () => {
    creator?.stop();
    await cluster?.stop();
  });

  test("only istio without the multi-network classes", async () => {
    const only = classCreator(cluster, false);
    await only.start();
    await waitUntil(async () => (await cluster.request("GET", classPath("istio"))).status === 200, "istio");
    await only.settled();
    only.stop();
    assert.equal((await cluster.request("GET", classPath("istio-remote"))).status, 404);
    await cluster.must("DELETE", classPath("istio"));
  });

  test("the built-in classes are created, an edited one kept, a deleted one made again", async () => {
    creator = classCreator(cluster);
    await creator.start();
    assert.deepEqual(await builtinClassSpecs(cluster), {
      istio: { controllerName: "istio.io/gateway-controller", description: "The default Istio GatewayClass" },
      "istio-remote": {
        controllerName: "istio.io/unmanaged-gateway",
        description: "Remote to this cluster. Does not deploy or affect configuration.",
      },
    });
    const edited = (await cluster.must("GET", classPath("istio"))).body as KubeObject;
    await cluster.must("PUT", classPath("istio"), { ...edited, spec: { ...edited.spec, description: "ours now" } });
    await cluster.must("DELETE", classPath("istio-remote"));
    await waitUntil(
      async () => (await cluster.request("GET", classPath("istio-remote"))).status === 200,
      "istio-remote again",
    );
    await creator.settled();
    assert.equal(((await cluster.must("GET", classPath("istio"))).body as KubeObject).spec?.description, "ours now");
  });
});

const istiodSkip = skip ?? peersSkipReason("istiod") ?? peersSkipReason("istioctl");

/** istioctl's injector ConfigMap for a default install: the templates and values istiod renders with. */
function istioctlInjectorConfigMap(): KubeObject {
  const text = execFileSync(requirePeer("istioctl"), ["manifest", "generate"], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  for (const doc of parseAllDocuments(text)) {
    const object = doc.toJS() as KubeObject | null;
    if (object?.kind === "ConfigMap" && object.metadata.name === "istio-sidecar-injector") return object;
  }
  throw new Error("istioctl manifest generate made no istio-sidecar-injector ConfigMap");
}

/**
 * An object as made, for comparison: without what the API server assigns, the namespace named `NS`
 * and the owning Gateway's uid `UID` (managedFields name owner references by uid).
 */
function comparable(object: KubeObject, namespace: string): unknown {
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    generation: _g,
    managedFields,
    ...metadata
  } = object.metadata;
  const fields = (managedFields ?? []).map(({ time: _time, ...rest }) => rest);
  // A Service's allocated addresses and node ports.
  const {
    clusterIP: _ip,
    clusterIPs: _ips,
    ports,
    ...spec
  } = (object.spec ?? {}) as {
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: { nodePort?: number }[];
  };
  const specPorts = ports?.map(({ nodePort: _port, ...rest }) => rest);
  const made = { ...object, metadata: { ...metadata, managedFields: fields }, spec: { ...spec, ports: specPorts } };
  let text = JSON.stringify(made).replaceAll(namespace, "NS");
  for (const owner of metadata.ownerReferences ?? []) text = text.replaceAll(owner.uid, "UID");
  return JSON.parse(text);
}

/**
 * istiod and Sluice's controller side by side in one cluster of their own (istiod takes the
 * istio-gateway-deployment-default Lease in istio-system), each over a namespace of its own, with
 * istioctl's injector ConfigMap: the same Gateway, changed the same way, makes the same objects.
 * Registers the suite's hooks and its first test, that the built-in GatewayClasses are the same;
 * `istiodEnv` turns istiod's features on, `ambient` Sluice's alike.
 */
function besideIstiod(istiodEnv: NodeJS.ProcessEnv, ambient: AmbientOptions) {
  let beside: IstiodBeside | undefined;
  let controller: ReturnType<typeof sluiceController> | undefined;
  const classes = builtinClasses(ambient);
  const ctx = {
    cluster: undefined as unknown as Cluster,
    sides: { istiod: "", sluice: "" },
    sluiceClasses: {} as Record<string, unknown>,
    sluiceClassWriters: {} as Record<string, unknown>,
    /** Runs `step` in istiod's namespace, then in Sluice's. */
    both: async (step: (ns: string) => Promise<unknown>) => {
      await step(ctx.sides.istiod);
      await step(ctx.sides.sluice);
    },
    /** The objects `name` is made of in each namespace, once both have them all (`kinds`), compared. */
    same: async (
      name: string,
      kinds: (keyof ReturnType<typeof madePaths>)[],
      check: (o: KubeObject) => boolean = () => true,
    ) => {
      const { cluster, sides } = ctx;
      const read = async (ns: string) => {
        const paths = madePaths(ns, name);
        const out: Record<string, KubeObject> = {};
        for (const kind of kinds) {
          const answer = await cluster.request("GET", paths[kind]);
          if (answer.status !== 200) return undefined;
          out[kind] = answer.body as KubeObject;
        }
        return out;
      };
      let last: [Record<string, KubeObject> | undefined, Record<string, KubeObject> | undefined] = [
        undefined,
        undefined,
      ];
      await waitUntil(
        async () => {
          last = [await read(sides.istiod), await read(sides.sluice)];
          return last.every((objects) => objects !== undefined && Object.values(objects).every(check));
        },
        `${name}'s ${kinds.join(", ")} on both sides`,
      );
      const [istiod, sluice] = last as [Record<string, KubeObject>, Record<string, KubeObject>];
      for (const kind of kinds) {
        assert.deepEqual(comparable(sluice[kind], sides.sluice), comparable(istiod[kind], sides.istiod), kind);
      }
      return { istiod, sluice };
    },
  };

  before(async () => {
    const injector = istioctlInjectorConfigMap();
    beside = await startIstiodBeside({
      selectLabel: SELECT_LABEL,
      name: "gateway-deployment",
      env: istiodEnv,
      prepare: async (cluster) => {
        // istiod makes Gateway deployments with the templates of its injector's ConfigMap.
        await cluster.must("POST", "/api/v1/namespaces/istio-system/configmaps", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: injector.metadata.name },
          data: injector.data,
        });
        // The GatewayClasses Sluice makes, taken away again for istiod to make its own.
        const creator = classCreator(cluster, true, ambient);
        await creator.start();
        ctx.sluiceClasses = await builtinClassSpecs(cluster, classes);
        ctx.sluiceClassWriters = await builtinClassWriters(cluster, classes);
        creator.stop();
        for (const name of Object.keys(ctx.sluiceClasses)) await cluster.must("DELETE", classPath(name));
      },
    });
    ctx.cluster = beside.cluster;
    ctx.sides = beside.namespaces;
    const injection = new InjectionSettingsWatcher(
      { config: injector.data?.config, values: injector.data?.values },
      { from: { config: "istioctl", values: "istioctl" }, revision: "", log: pino({ level: "silent" }) },
    );
    controller = sluiceController(ctx.cluster, "sluice", "istio-system", injection, ambient);
    await controller.start();
  });
  after(async () => {
    controller?.stop();
    await beside?.stop();
  });

  test("the same built-in GatewayClasses", async () => {
    assert.deepEqual(await builtinClassSpecs(ctx.cluster, classes), ctx.sluiceClasses);
    // Created alike: by an update under pilot-discovery, owning the same fields.
    const istiodWriters = await builtinClassWriters(ctx.cluster, classes);
    assert.deepEqual(
      Object.values(istiodWriters).map((entries) =>
        (entries as { manager: string; operation: string }[]).map((f) => [f.manager, f.operation]),
      ),
      classes.map(() => [["pilot-discovery", "Update"]]),
    );
    assert.deepEqual(ctx.sluiceClassWriters, istiodWriters);
  });
  return ctx;
}

describe("GatewayDeploymentController against istiod", { skip: istiodSkip }, () => {
  const beside = besideIstiod({}, {});
  const { both, same } = beside;

  test("a new Gateway: the same ServiceAccount, Deployment and Service", async () => {
    await both((ns) =>
      beside.cluster.must(
        "POST",
        `${GW}/namespaces/${ns}/gateways`,
        gateway(
          "edge",
          { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
          { labels: { team: "edge" }, annotations: { "networking.istio.io/service-type": "NodePort" } },
        ),
      ),
    );
    await same("edge-istio", ["serviceAccount", "deployment", "service"]);
    // The controller version written to the Gateway, as the same record of the same write.
    const written = async (ns: string) => {
      const gw = (await beside.cluster.must("GET", `${GW}/namespaces/${ns}/gateways/edge`)).body as KubeObject;
      return (gw.metadata.managedFields ?? [])
        .filter((f) => f.manager === "istio.io/gateway-controller")
        .map(({ time: _time, ...rest }) => rest);
    };
    const istiodWrote = await written(beside.sides.istiod);
    assert.equal(istiodWrote.length, 1);
    assert.deepEqual(await written(beside.sides.sluice), istiodWrote);
  });

  test("a listener added: the same ports", async () => {
    await both(async (ns) => {
      const path = `${GW}/namespaces/${ns}/gateways/edge`;
      const gw = (await beside.cluster.must("GET", path)).body as KubeObject;
      const listeners = [
        ...((gw.spec?.listeners as unknown[]) ?? []),
        { name: "tls.passthrough", port: 8443, protocol: "TLS", tls: { mode: "Passthrough" } },
      ];
      // A merge patch: the control plane writes the Gateway's status meanwhile.
      await beside.cluster.must(
        "PATCH",
        path,
        { spec: { listeners } },
        { "content-type": "application/merge-patch+json" },
      );
    });
    const hasPort = (o: KubeObject) => o.kind !== "Service" || JSON.stringify(o.spec).includes("8443");
    await same("edge-istio", ["serviceAccount", "deployment", "service"], hasPort);
  });

  test("parameters overlays: the same overlaid objects, autoscaler and disruption budget included", async () => {
    await both(async (ns) => {
      await beside.cluster.must("POST", `/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "tuned-options" },
        data: {
          deployment:
            "spec:\n  template:\n    spec:\n      containers:\n      - name: istio-proxy\n        resources:\n          limits:\n            memory: 512Mi\n",
          horizontalPodAutoscaler: "spec:\n  minReplicas: 2\n  maxReplicas: 5\n",
          podDisruptionBudget: "spec:\n  minAvailable: 1\n",
        },
      });
      await beside.cluster.must("POST", `${GW}/namespaces/${ns}/gateways`, TUNED_GATEWAY);
    });
    await same("tuned-istio", ["serviceAccount", "deployment", "service", "autoscaler", "disruptionBudget"]);
  });
});

// With ambient (and its multi-network part) on, on both sides: waypoints and east-west gateways are
// made from the waypoint template, and what other Gateways run is kept out of ambient.
describe("GatewayDeploymentController against istiod, ambient", { skip: istiodSkip }, () => {
  const beside = besideIstiod(
    { PILOT_ENABLE_AMBIENT: "true", AMBIENT_ENABLE_MULTI_NETWORK: "true" },
    { ambientWaypoints: true, ambientMultiNetwork: true },
  );
  const { both, same } = beside;
  const create = (object: unknown) =>
    both((ns) => beside.cluster.must("POST", `${GW}/namespaces/${ns}/gateways`, object));

  test("a waypoint: the same ServiceAccount, Deployment and Service", async () => {
    await create(
      gateway(
        "waypoint",
        { gatewayClassName: "istio-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
        { labels: { "istio.io/waypoint-for": "service" } },
      ),
    );
    const { sluice } = await same("waypoint", ["serviceAccount", "deployment", "service"]);
    // What sets a waypoint apart, on top of being the same as istiod's.
    assert.equal(sluice.deployment.metadata.labels?.["gateway.istio.io/managed"], "istio.io-mesh-controller");
    const template = (
      sluice.deployment.spec as {
        template: {
          metadata: { labels: Record<string, string> };
          spec: { serviceAccountName: string; containers: { args: string[] }[] };
        };
      }
    ).template;
    assert.equal(template.metadata.labels["istio.io/dataplane-mode"], "none");
    assert.equal(template.metadata.labels["istio.io/waypoint-for"], "service");
    assert.equal(template.spec.serviceAccountName, "waypoint");
    assert.deepEqual(template.spec.containers[0].args.slice(0, 2), ["proxy", "waypoint"]);
    const spec = sluice.service.spec as { type: string; ports: { name: string; port: number; appProtocol: string }[] };
    assert.equal(spec.type, "ClusterIP");
    assert.deepEqual(
      spec.ports.map((p) => [p.name, p.port, p.appProtocol]),
      [
        ["status-port", 15021, "tcp"],
        ["mesh", 15008, "hbone"],
      ],
    );
  });

  test("an east-west gateway: the same ServiceAccount, Deployment and Service", async () => {
    await create(
      gateway(
        "eastwest",
        {
          gatewayClassName: "istio-east-west",
          listeners: [
            {
              name: "mesh",
              port: 15008,
              protocol: "HBONE",
              tls: { mode: "Terminate", options: { "gateway.istio.io/tls-terminate-mode": "ISTIO_MUTUAL" } },
            },
          ],
        },
        { labels: { "topology.istio.io/network": "network-1" } },
      ),
    );
    const { sluice } = await same("eastwest", ["serviceAccount", "deployment", "service"]);
    assert.equal(sluice.service.metadata.labels?.["gateway.istio.io/managed"], "istio.io-eastwest-controller");
    assert.equal((sluice.service.spec as { type: string }).type, "LoadBalancer");
    // Its proxy asks for its own network's view.
    assert.match(JSON.stringify(sluice.deployment.spec), /ISTIO_META_REQUESTED_NETWORK_VIEW","value":"network-1"/);
  });

  test("a waypoint's status: the same as istiod's, addresses naming its Service", async () => {
    // Sluice's Gateway status writer, as sluiced runs it, writing only its own namespace's.
    const { cluster, sides } = beside;
    const store = new ConfigStore();
    const source = new KubeSource({
      kubeConfig: cluster.kubeConfig(),
      writer: store,
      discoverySelectors: [{ matchLabels: { [SELECT_LABEL]: "sluice" } }],
    });
    await source.start();
    const registry = storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local");
    const writer = new GatewayStatusWriter({
      conversion: storeGatewayConversion(store, registry, "cluster.local"),
      store,
      target: source,
      owns: (obj: ConfigObject) => obj.metadata.namespace === sides.sluice,
    });
    writer.start();
    try {
      // The waypoint's proxy, as the endpoint controller would list it had it a node to run on.
      await both(async (ns) => {
        await cluster.must("POST", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
          apiVersion: "discovery.k8s.io/v1",
          kind: "EndpointSlice",
          metadata: { name: "waypoint-proxy", labels: { "kubernetes.io/service-name": "waypoint" } },
          addressType: "IPv4",
          endpoints: [{ addresses: ["10.244.0.9"], conditions: { ready: true } }],
          ports: [
            { name: "mesh", port: 15008, protocol: "TCP" },
            { name: "status-port", port: 15021, protocol: "TCP" },
          ],
        });
      });
      const status = async (ns: string) => {
        const gw = (await cluster.must("GET", `${GW}/namespaces/${ns}/gateways/waypoint`)).body as KubeObject & {
          status?: { addresses?: { type: string; value: string }[] };
        };
        const service = (await cluster.must("GET", madePaths(ns, "waypoint").service)).body as KubeObject;
        // Each side's Service has its own cluster IP.
        const ip = String((service.spec as { clusterIP: string }).clusterIP);
        const text = JSON.stringify(gw.status ?? {})
          .replaceAll(ns, "NS")
          .replaceAll(ip, "CLUSTER-IP")
          .replace(/"lastTransitionTime":"[^"]*"/g, '"lastTransitionTime":"T"');
        return JSON.parse(text) as { addresses?: { type: string; value: string }[] };
      };
      let last: { addresses?: unknown }[] = [];
      await waitUntil(async () => {
        last = [await status(sides.istiod), await status(sides.sluice)];
        return last.every((s) => s.addresses !== undefined);
      }, "the waypoint's addresses on both sides");
      // Both address types (the class reports both), the Service's IP and its hostname.
      assert.deepEqual(last[0].addresses, [
        { type: "IPAddress", value: "CLUSTER-IP" },
        { type: "Hostname", value: "waypoint.NS.svc.cluster.local" },
      ]);
      assert.deepEqual(last[1], last[0]);
    } finally {
      writer.stop();
      source.stop();
    }
  });

  test("a Gateway of class istio: the same objects, kept out of ambient", async () => {
    await create(
      gateway("ingress", { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
    );
    const { sluice } = await same("ingress-istio", ["serviceAccount", "deployment", "service"]);
    for (const object of Object.values(sluice)) {
      assert.equal(object.metadata.labels?.["istio.io/dataplane-mode"], "none", object.kind);
    }
  });
});
