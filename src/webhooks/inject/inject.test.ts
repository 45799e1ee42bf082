import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertValidPod } from "../../../test/support/pod-check.ts";
import { DEFAULT_MESH_CONFIG, type MeshConfig } from "../../config/index.ts";
import { InjectionError, injectPod, STATUS_ANNOTATION } from "./inject.ts";
import { applyPatch, createPatch } from "./jsonpatch.ts";
import { strategicMergePod } from "./merge.ts";
import type { Container, Pod } from "./pod.ts";
import { type InjectionPolicyConfig, injectRequired, webhookSelects } from "./policy.ts";
import { canonicalQuantity } from "./quantity.ts";
import {
  DEFAULT_INJECTION_SETTINGS,
  detectNativeSidecar,
  type InjectionSettings,
  nativeSidecarModeFromEnv,
} from "./settings.ts";

function appPod(annotations: Record<string, string> = {}, extra: Partial<Container> = {}): Pod {
  return {
    metadata: { name: "web-0", namespace: "shop", labels: { app: "web", version: "v2" }, annotations },
    spec: {
      containers: [
        {
          name: "web",
          image: "web:2",
          ports: [
            { name: "http", containerPort: 8080, protocol: "TCP" },
            { name: "metrics", containerPort: 9090, protocol: "TCP" },
          ],
          readinessProbe: { httpGet: { path: "/ready", port: "http", scheme: "HTTPS" } },
          livenessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 2 },
          ...extra,
        },
      ],
    },
  };
}

function inject(pod: Pod, settings: Partial<InjectionSettings> = {}, mesh: MeshConfig = DEFAULT_MESH_CONFIG): Pod {
  const result = injectPod({ pod, mesh, settings: { ...DEFAULT_INJECTION_SETTINGS, ...settings } });
  // The patch the webhook answers with must produce exactly the injected pod.
  assert.deepEqual(applyPatch(pod, result.patch), result.pod);
  assertValidPod(result.pod);
  return result.pod;
}

function container(pod: Pod, name: string): Container {
  const found = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === name);
  assert.ok(found, `no container ${name}`);
  return found;
}

function env(c: Container): Map<string, string | undefined> {
  return new Map(c.env?.map((e) => [e.name, e.value]));
}

function argAfter(c: Container, flag: string): string | undefined {
  const args = c.args ?? [];
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

describe("sidecar template", () => {
  it("adds istio-init first, istio-proxy last, volumes, labels and the status annotation", () => {
    const pod = inject(appPod());
    assert.deepEqual(
      pod.spec.initContainers?.map((c) => c.name),
      ["istio-init"],
    );
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ["web", "istio-proxy"],
    );
    assert.equal(pod.metadata.labels?.["security.istio.io/tlsMode"], "istio");
    assert.equal(pod.metadata.labels?.["service.istio.io/canonical-name"], "web");
    assert.equal(pod.metadata.labels?.["service.istio.io/canonical-revision"], "v2");
    assert.equal(pod.metadata.annotations?.["kubectl.kubernetes.io/default-container"], "web");
    const status = JSON.parse(pod.metadata.annotations?.[STATUS_ANNOTATION] ?? "{}");
    assert.deepEqual(status.initContainers, ["istio-init"]);
    assert.deepEqual(status.containers, ["istio-proxy"]);
    assert.ok(status.volumes.includes("istio-envoy") && status.volumes.includes("istio-token"));
    assert.equal(status.revision, "default");
    const proxy = container(pod, "istio-proxy");
    assert.equal(proxy.image, "docker.io/istio/proxyv2:1.28.0");
    assert.equal(
      env(proxy).get("ISTIO_META_POD_PORTS"),
      '[\n    {"name":"http","containerPort":8080,"protocol":"TCP"}\n    ,{"name":"metrics","containerPort":9090,"protocol":"TCP"}\n]',
    );
    assert.equal(env(proxy).get("PROXY_CONFIG"), "{}\n");
    assert.equal(env(proxy).get("ISTIO_META_OWNER"), "kubernetes://apis/v1/namespaces/shop/pods/web-0");
    assert.equal(argAfter(container(pod, "istio-init"), "-d"), "15090,15021,15020");
  });

  it("rewrites probes to the agent and hands it the originals", () => {
    const pod = inject(appPod());
    const web = container(pod, "web");
    assert.deepEqual(web.readinessProbe, { httpGet: { path: "/app-health/web/readyz", port: 15020, scheme: "HTTP" } });
    assert.deepEqual(web.livenessProbe, { httpGet: { path: "/app-health/web/livez", port: 15020 }, timeoutSeconds: 2 });
    assert.deepEqual(JSON.parse(env(container(pod, "istio-proxy")).get("ISTIO_KUBE_APP_PROBERS") ?? ""), {
      "/app-health/web/livez": { tcpSocket: { port: 8080 }, timeoutSeconds: 2 },
      "/app-health/web/readyz": { httpGet: { path: "/ready", port: 8080, scheme: "HTTPS" } },
    });
  });

  it("leaves probes alone when the pod says so", () => {
    const pod = inject(appPod({ "sidecar.istio.io/rewriteAppHTTPProbers": "false" }));
    assert.deepEqual(container(pod, "web").readinessProbe, appPod().spec.containers[0].readinessProbe);
    assert.equal(env(container(pod, "istio-proxy")).has("ISTIO_KUBE_APP_PROBERS"), false);
  });

  it("is idempotent: injecting an injected pod changes nothing", () => {
    for (const settings of [{}, { nativeSidecars: true }]) {
      const once = inject(appPod({ "prometheus.io/port": "9090" }), settings);
      const twice = injectPod({
        pod: once,
        mesh: DEFAULT_MESH_CONFIG,
        settings: { ...DEFAULT_INJECTION_SETTINGS, ...settings },
      });
      assert.deepEqual(twice.patch, []);
    }
  });

  it("runs the proxy as a native sidecar with ENABLE_NATIVE_SIDECARS, unless the pod opts out", () => {
    const pod = inject(appPod(), { nativeSidecars: true });
    assert.deepEqual(
      pod.spec.initContainers?.map((c) => c.name),
      ["istio-init", "istio-proxy"],
    );
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ["web"],
    );
    const proxy = container(pod, "istio-proxy");
    assert.equal(proxy.restartPolicy, "Always");
    assert.deepEqual(proxy.lifecycle?.preStop, {
      exec: { command: ["pilot-agent", "request", "--debug-port=15020", "POST", "drain"] },
    });
    const optOut = inject(appPod({ "sidecar.istio.io/nativeSidecar": "false" }), { nativeSidecars: true });
    assert.deepEqual(
      optOut.spec.containers.map((c) => c.name),
      ["web", "istio-proxy"],
    );
  });

  it("starts the proxy first when the application waits for it", () => {
    const pod = inject(appPod({ "proxy.istio.io/config": "holdApplicationUntilProxyStarts: true" }));
    assert.equal(pod.spec.containers[0].name, "istio-proxy");
    assert.deepEqual(pod.spec.containers[0].lifecycle, { postStart: { exec: { command: ["pilot-agent", "wait"] } } });
    assert.equal(env(pod.spec.containers[0]).get("PROXY_CONFIG"), '{"holdApplicationUntilProxyStarts":true}\n');
  });

  it("passes proxy.istio.io/config metadata to the proxy and to istio-init", () => {
    const pod = inject(appPod({ "proxy.istio.io/config": "proxyMetadata:\n  ISTIO_META_DNS_CAPTURE: 'true'\n" }));
    assert.equal(env(container(pod, "istio-proxy")).get("ISTIO_META_DNS_CAPTURE"), "true");
    assert.equal(env(container(pod, "istio-init")).get("ISTIO_META_DNS_CAPTURE"), "true");
  });

  it("honours the sidecar.istio.io and traffic.sidecar.istio.io annotations", () => {
    const pod = inject(
      appPod({
        "sidecar.istio.io/proxyCPU": "250m",
        "sidecar.istio.io/proxyMemory": "256Mi",
        "traffic.sidecar.istio.io/includeOutboundIPRanges": "10.0.0.0/8",
        "traffic.sidecar.istio.io/excludeInboundPorts": "9090",
        "traffic.sidecar.istio.io/excludeOutboundPorts": "5432",
        "sidecar.istio.io/logLevel": "debug",
      }),
    );
    const proxy = container(pod, "istio-proxy");
    const init = container(pod, "istio-init");
    assert.deepEqual(proxy.resources, { requests: { cpu: "250m", memory: "256Mi" } });
    assert.equal(argAfter(init, "-i"), "10.0.0.0/8");
    assert.equal(argAfter(init, "-d"), "15090,15021,9090,15020");
    assert.equal(argAfter(init, "-o"), "5432");
    assert.ok(proxy.args?.includes("--proxyLogLevel=debug"));
  });

  it("passes the iptables options of the values, and runs the proxy privileged to trace iptables", () => {
    const pod = inject(appPod({ "proxy.istio.io/config": "proxyMetadata: {IPTABLES_TRACE_LOGGING: 'true'}" }), {
      forceApplyIptables: true,
      nativeNftables: true,
    });
    assert.deepEqual(container(pod, "istio-init").args?.slice(-3), [
      "--log_output_level=default:info",
      "--force-apply",
      "--native-nftables",
    ]);
    assert.deepEqual(container(pod, "istio-proxy").securityContext, {
      allowPrivilegeEscalation: true,
      capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] },
      privileged: true,
      readOnlyRootFilesystem: true,
      runAsGroup: 1337,
      runAsNonRoot: false,
      runAsUser: 0,
    });
  });

  it("has no init container when interception is off", () => {
    const pod = inject(appPod({ "sidecar.istio.io/interceptionMode": "NONE" }));
    assert.equal(pod.spec.initContainers, undefined);
    assert.equal(env(container(pod, "istio-proxy")).get("ISTIO_META_INTERCEPTION_MODE"), "NONE");
  });

  it("keeps the user's own istio-proxy fields, except an `auto` image", () => {
    const custom: Container = { name: "istio-proxy", image: "auto", resources: { limits: { memory: "2Gi" } } };
    const pod = appPod();
    pod.spec.containers.push(custom);
    const injected = inject(pod);
    const proxy = container(injected, "istio-proxy");
    assert.equal(proxy.image, "docker.io/istio/proxyv2:1.28.0");
    assert.deepEqual(proxy.resources, {
      limits: { cpu: "2", memory: "2Gi" },
      requests: { cpu: "100m", memory: "128Mi" },
    });
    assert.deepEqual(JSON.parse(injected.metadata.annotations?.["proxy.istio.io/overrides"] ?? "{}"), {
      containers: [{ name: "istio-proxy", resources: { limits: { memory: "2Gi" } } }],
    });
  });

  it("moves the application's Prometheus scrape to the agent", () => {
    const pod = inject(appPod({ "prometheus.io/port": "9090", "prometheus.io/path": "/m" }));
    assert.equal(pod.metadata.annotations?.["prometheus.io/port"], "15020");
    assert.equal(pod.metadata.annotations?.["prometheus.io/path"], "/stats/prometheus");
    assert.equal(
      env(container(pod, "istio-proxy")).get("ISTIO_PROMETHEUS_ANNOTATIONS"),
      '{"scrape":"","path":"/m","port":"9090"}',
    );
  });

  it("hands the agent several scrape targets, and refuses Istio's own ports", () => {
    const pod = inject(appPod({ "prometheus.istio.io/scrape-targets": "8080, 9090:/custom" }));
    assert.deepEqual(JSON.parse(env(container(pod, "istio-proxy")).get("ISTIO_PROMETHEUS_ANNOTATIONS") ?? ""), {
      scrape: "",
      path: "/metrics",
      port: "8080",
      targets: [
        { port: "8080", path: "/metrics" },
        { port: "9090", path: "/custom" },
      ],
    });
    assert.throws(
      () =>
        injectPod({
          pod: appPod({ "prometheus.io/port": "15090" }),
          mesh: DEFAULT_MESH_CONFIG,
          settings: DEFAULT_INJECTION_SETTINGS,
        }),
      {
        message:
          "failed to process pod: invalid prometheus scrape configuration: port 15090 is reserved for Istio (Envoy Prometheus (already merged)) and cannot be scraped",
      },
    );
  });

  it("uses the image type and a full image reference from annotations", () => {
    const distroless = inject(appPod({ "sidecar.istio.io/proxyImageType": "distroless" }));
    assert.equal(container(distroless, "istio-proxy").image, "docker.io/istio/proxyv2:1.28.0-distroless");
    const custom = inject(appPod({ "sidecar.istio.io/proxyImage": "registry.local/proxy:x" }));
    assert.equal(container(custom, "istio-proxy").image, "registry.local/proxy:x");
    assert.equal(container(custom, "istio-init").image, "registry.local/proxy:x");
  });

  it("refuses invalid annotations with Istio's messages", () => {
    assert.throws(
      () =>
        injectPod({
          pod: appPod({ "traffic.sidecar.istio.io/excludeInboundPorts": "80,x" }),
          mesh: DEFAULT_MESH_CONFIG,
          settings: DEFAULT_INJECTION_SETTINGS,
        }),
      (err: unknown) =>
        err instanceof InjectionError &&
        err.message ===
          "failed to run injection template: 1 error occurred:\n\t* invalid value '80,x' for annotation 'traffic.sidecar.istio.io/excludeInboundPorts': excludeInboundPorts invalid: failed parsing port 'x': failed parsing port 'x': strconv.ParseUint: parsing \"x\": invalid syntax\n\n",
    );
  });
});

describe("effective proxy config", () => {
  const proxyConfig = (namespace: string, name: string, spec: object, creationTimestamp = "2026-01-01T00:00:00Z") => ({
    apiVersion: "networking.istio.io/v1beta1",
    kind: "ProxyConfig",
    metadata: { namespace, name, creationTimestamp },
    spec,
  });

  it("layers the root namespace's, the namespace's and the workload's ProxyConfig, then the annotation", () => {
    const resources = [
      proxyConfig("istio-system", "global", { concurrency: 1, environmentVariables: { A: "root", B: "root" } }),
      proxyConfig("shop", "ns", { environmentVariables: { B: "ns", C: "ns" } }),
      proxyConfig("shop", "web", { selector: { matchLabels: { app: "web" } }, image: { imageType: "distroless" } }),
      proxyConfig("shop", "other", { selector: { matchLabels: { app: "other" } }, concurrency: 8 }),
    ];
    const result = injectPod({
      pod: appPod({ "proxy.istio.io/config": "proxyMetadata:\n  C: pod\n" }),
      mesh: DEFAULT_MESH_CONFIG,
      settings: DEFAULT_INJECTION_SETTINGS,
      proxyConfigs: resources,
    });
    const proxy = container(result.pod, "istio-proxy");
    assert.equal(proxy.image, "docker.io/istio/proxyv2:1.28.0-distroless");
    const vars = env(proxy);
    assert.deepEqual([vars.get("A"), vars.get("B"), vars.get("C")], ["root", "ns", "pod"]);
    assert.deepEqual(JSON.parse(vars.get("PROXY_CONFIG") ?? ""), {
      concurrency: 1,
      proxyMetadata: { A: "root", B: "ns", C: "pod" },
      image: { imageType: "distroless" },
    });
  });

  it("takes the oldest namespace-wide ProxyConfig", () => {
    const result = injectPod({
      pod: appPod(),
      mesh: DEFAULT_MESH_CONFIG,
      settings: DEFAULT_INJECTION_SETTINGS,
      proxyConfigs: [
        proxyConfig("shop", "newer", { concurrency: 4 }, "2026-02-01T00:00:00Z"),
        proxyConfig("shop", "older", { concurrency: 3 }, "2026-01-01T00:00:00Z"),
      ],
    });
    assert.equal(JSON.parse(env(container(result.pod, "istio-proxy")).get("PROXY_CONFIG") ?? "").concurrency, 3);
  });
});

describe("other templates", () => {
  it("gateway: a router proxy, no init container, unprivileged low ports", () => {
    const pod = inject(appPod({ "inject.istio.io/templates": "gateway" }));
    const proxy = container(pod, "istio-proxy");
    assert.deepEqual(proxy.args?.slice(0, 2), ["proxy", "router"]);
    assert.equal(pod.spec.initContainers, undefined);
    assert.deepEqual(pod.spec.securityContext, {
      sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }],
    });
  });

  it("grpc-agent: the agent without Envoy, and the application pointed at its bootstrap", () => {
    const pod = inject(appPod({ "inject.istio.io/templates": "grpc-agent" }));
    const proxy = container(pod, "istio-proxy");
    assert.equal(env(proxy).get("DISABLE_ENVOY"), "true");
    assert.equal(env(proxy).get("ISTIO_META_GENERATOR"), "grpc");
    const web = container(pod, "web");
    assert.equal(env(web).get("GRPC_XDS_BOOTSTRAP"), "/etc/istio/proxy/grpc-bootstrap.json");
    assert.ok(web.volumeMounts?.some((m) => m.name === "istio-xds"));
    // The template turns probe rewriting off.
    assert.equal(web.readinessProbe?.httpGet?.path, "/ready");
  });

  it("grpc-simple: only a bootstrap init container, no agent", () => {
    const pod = inject(appPod({ "inject.istio.io/templates": "grpc-simple" }));
    assert.deepEqual(
      pod.spec.initContainers?.map((c) => c.name),
      ["grpc-bootstrap-init"],
    );
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ["web"],
    );
    assert.equal(env(container(pod, "web")).get("GRPC_XDS_BOOTSTRAP"), "/var/lib/grpc/data/bootstrap.json");
  });

  it("an unknown template is an error naming the known ones", () => {
    assert.throws(
      () =>
        injectPod({
          pod: appPod({ "inject.istio.io/templates": "sidecar,nope" }),
          mesh: DEFAULT_MESH_CONFIG,
          settings: DEFAULT_INJECTION_SETTINGS,
        }),
      /requested template "nope" not found; have sidecar, gateway, grpc-agent, grpc-simple/,
    );
  });
});

describe("injection policy", () => {
  const spec = { containers: [] };
  const enabled: InjectionPolicyConfig = { policy: "enabled", neverInjectSelector: [], alwaysInjectSelector: [] };
  const disabled: InjectionPolicyConfig = { ...enabled, policy: "disabled" };
  it("follows the label over the annotation, then the policy", () => {
    assert.equal(injectRequired(enabled, spec, { namespace: "a" }), true);
    assert.equal(injectRequired(disabled, spec, { namespace: "a" }), false);
    assert.equal(
      injectRequired(disabled, spec, { namespace: "a", labels: { "sidecar.istio.io/inject": "true" } }),
      true,
    );
    assert.equal(
      injectRequired(enabled, spec, {
        namespace: "a",
        labels: { "sidecar.istio.io/inject": "false" },
        annotations: { "sidecar.istio.io/inject": "true" },
      }),
      false,
    );
    assert.equal(
      injectRequired(enabled, spec, { namespace: "a", annotations: { "sidecar.istio.io/inject": "yes" } }),
      true,
    );
    assert.equal(injectRequired(enabled, spec, { namespace: "kube-system" }), false);
    assert.equal(injectRequired(enabled, { containers: [], hostNetwork: true }, { namespace: "a" }), false);
  });

  it("applies neverInjectSelector before alwaysInjectSelector, and the pod's own choice before both", () => {
    const config: InjectionPolicyConfig = {
      policy: "disabled",
      neverInjectSelector: [{ matchExpressions: [{ key: "job", operator: "Exists" }] }],
      alwaysInjectSelector: [{ matchLabels: { team: "shop" } }, {}],
    };
    assert.equal(injectRequired(config, spec, { namespace: "a", labels: { team: "shop" } }), true);
    assert.equal(injectRequired(config, spec, { namespace: "a", labels: { team: "shop", job: "x" } }), false);
    assert.equal(injectRequired(config, spec, { namespace: "a", labels: { team: "other" } }), false);
    assert.equal(
      injectRequired(config, spec, { namespace: "a", labels: { job: "x", "sidecar.istio.io/inject": "true" } }),
      true,
    );
  });

  it("emulates the webhook's namespace and object selectors", () => {
    assert.equal(webhookSelects({ "istio-injection": "enabled" }, {}, ""), true);
    assert.equal(webhookSelects({ "istio-injection": "enabled" }, { "sidecar.istio.io/inject": "false" }, ""), false);
    assert.equal(webhookSelects({ "istio-injection": "disabled" }, { "sidecar.istio.io/inject": "true" }, ""), false);
    assert.equal(webhookSelects({}, {}, ""), false);
    assert.equal(webhookSelects({}, { "sidecar.istio.io/inject": "true" }, ""), true);
    assert.equal(webhookSelects({ "istio.io/rev": "canary" }, {}, "canary"), true);
    assert.equal(webhookSelects({ "istio.io/rev": "canary" }, {}, ""), false);
  });
});

describe("native sidecar mode", () => {
  it("reads ENABLE_NATIVE_SIDECARS and asks the nodes in auto mode", () => {
    assert.equal(nativeSidecarModeFromEnv({}), "auto");
    assert.equal(nativeSidecarModeFromEnv({ ENABLE_NATIVE_SIDECARS: "true" }), "enabled");
    assert.equal(nativeSidecarModeFromEnv({ ENABLE_NATIVE_SIDECARS: "yes" }), "disabled");
    const node = (name: string, kubeletVersion: string) => ({
      metadata: { name },
      status: { nodeInfo: { kubeletVersion } },
    });
    const nodes = [node("a", "v1.33.0"), node("b", "v1.31.2")];
    assert.equal(detectNativeSidecar("auto", nodes, "a"), true);
    assert.equal(detectNativeSidecar("auto", nodes, "b"), false);
    assert.equal(detectNativeSidecar("auto", nodes, undefined), false);
    assert.equal(detectNativeSidecar("auto", [node("a", "v1.34.0")], "unknown"), true);
    assert.equal(detectNativeSidecar("auto", undefined, "a"), false);
    assert.equal(detectNativeSidecar("enabled", undefined, undefined), true);
    assert.equal(detectNativeSidecar("disabled", nodes, "a"), false);
  });
});

describe("resource quantities", () => {
  it("are canonical as the API server stores them", () => {
    const cases: [string, string][] = [
      ["2000m", "2"],
      ["1024Mi", "1Gi"],
      ["1.5Gi", "1536Mi"],
      ["0.5", "500m"],
      ["1000", "1k"],
      ["1500", "1500"],
      ["100m", "100m"],
      ["1e3", "1e3"],
      ["0", "0"],
    ];
    for (const [input, canonical] of cases) assert.equal(canonicalQuantity(input), canonical, input);
  });

  it("in annotations are checked, and canonical in the injected proxy", () => {
    const pod = inject(
      appPod({ "sidecar.istio.io/proxyCPULimit": "1500m", "sidecar.istio.io/proxyMemoryLimit": "2048Mi" }),
    );
    assert.deepEqual(container(pod, "istio-proxy").resources, { limits: { cpu: "1500m", memory: "2Gi" } });
    assert.throws(
      () =>
        injectPod({
          pod: appPod({ "sidecar.istio.io/proxyCPU": "lots" }),
          mesh: DEFAULT_MESH_CONFIG,
          settings: DEFAULT_INJECTION_SETTINGS,
        }),
      /invalid value 'lots' for annotation 'sidecar.istio.io\/proxyCPU': quantities must match the regular expression/,
    );
  });
});

describe("strategic merge and JSON patch", () => {
  it("puts new list items before the pod's own, and merges items by key", () => {
    const pod: Pod = {
      metadata: {},
      spec: {
        containers: [{ name: "app", env: [{ name: "A", value: "1" }] }],
        volumes: [{ name: "data", emptyDir: {} }],
      },
    };
    const merged = strategicMergePod(pod, {
      spec: {
        containers: [{ name: "app", env: [{ name: "B", value: "2" }] }, { name: "proxy" }],
        volumes: [{ name: "v1", emptyDir: null }],
      },
    });
    assert.deepEqual(merged.spec.containers, [
      {
        name: "app",
        env: [
          { name: "B", value: "2" },
          { name: "A", value: "1" },
        ],
      },
      { name: "proxy" },
    ]);
    assert.deepEqual(merged.spec.volumes, [{ name: "v1" }, { name: "data", emptyDir: {} }]);
  });

  it("round-trips through a patch, escaping keys with slashes", () => {
    const from = { metadata: { annotations: { "a/b": "1", "c~d": "2" } }, list: [1, 2, 3] };
    const to = { metadata: { annotations: { "a/b": "x", "e/f": "3" } }, list: [1] };
    const patch = createPatch(from, to);
    assert.ok(patch.some((op) => op.path === "/metadata/annotations/a~1b" && op.op === "replace"));
    assert.ok(patch.some((op) => op.path === "/metadata/annotations/c~0d" && op.op === "remove"));
    assert.deepEqual(applyPatch(from, patch), to);
  });
});
