// Sidecar injection of one Pod, as Istio's injectPod does it: drop a previous injection, run the
// selected templates and merge each over the pod, re-apply the user's own istio-proxy/istio-init
// customisations, then post-process (cluster env, Prometheus merge, probe rewrite, status
// annotation, container order) and diff the result against the original as a JSON Patch.
import { stringify } from "yaml";
import type { ConfigObject, MeshConfig, ProxyConfig, ProxyConfigSpec } from "../../config/index.ts";
import { asString, goQuote } from "../../config/validation/common/index.ts";
import { parseGoBool } from "../../util/index.ts";
import { annotationsError } from "./annotations.ts";
import { createPatch, type PatchOperation } from "./jsonpatch.ts";
import { strategicMergePod } from "./merge.ts";
import {
  CORE_DUMP_CONTAINER,
  type Container,
  clone,
  type DeployMeta,
  deployMetaFromPod,
  findContainer,
  findSidecar,
  INIT_CONTAINER,
  type Pod,
  PROXY_CONTAINER,
  type TypeMeta,
  VALIDATION_CONTAINER,
} from "./pod.ts";
import { dumpAppProbers, KUBE_APP_PROBERS_ENV, rewriteProbes, shouldRewriteProbes } from "./probes.ts";
import { effectiveProxyConfig } from "./proxyconfig.ts";
import { canonicalQuantity } from "./quantity.ts";
import type { InjectionSettings } from "./settings.ts";
import { TEMPLATES, type TemplateData } from "./templates.ts";

export const STATUS_ANNOTATION = "sidecar.istio.io/status";
const OVERRIDES_ANNOTATION = "proxy.istio.io/overrides";
const TEMPLATES_ANNOTATION = "inject.istio.io/templates";
const NETWORK_LABEL = "topology.istio.io/network";

export interface InjectionRequest {
  pod: Pod;
  mesh: MeshConfig;
  settings: InjectionSettings;
  /** Proxy env from the webhook's path (`/inject/cluster/c1/net/n1`). */
  proxyEnvs?: Record<string, string>;
  /** The mesh's ProxyConfig resources (none for kube-inject, as istioctl). */
  proxyConfigs?: readonly ConfigObject<ProxyConfigSpec>[];
  /** The workload owning the pod; derived from the pod's controller when absent. */
  owner?: { deploy: DeployMeta; typeMeta: TypeMeta };
}

export interface InjectionResult {
  pod: Pod;
  patch: PatchOperation[];
}

/** A pod that cannot be injected; the message is the webhook's answer. */
export class InjectionError extends Error {}

interface SidecarStatus {
  initContainers: string[] | null;
  containers: string[] | null;
  volumes: string[] | null;
  imagePullSecrets: string[] | null;
  revision: string;
}

interface Overrides {
  containers?: Container[];
  initContainers?: Container[];
}

export function injectPod(req: InjectionRequest): InjectionResult {
  const original = req.pod;
  const proxyConfig = effectiveProxyConfig(req.mesh, req.proxyConfigs ?? [], original.metadata);
  const proxyEnvs = { ...req.proxyEnvs };
  const { merged, templatePod } = runTemplates(req, proxyConfig, proxyEnvs);
  const final = reapplyUserContainers(merged, original, templatePod, proxyConfig);
  postProcess(final, templatePod, req, proxyConfig, proxyEnvs);
  canonicalizeResources(final);
  return { pod: final, patch: createPatch(original, final) };
}

function runTemplates(
  req: InjectionRequest,
  proxyConfig: ProxyConfig,
  proxyEnvs: Record<string, string>,
): { merged: Pod; templatePod: Pod } {
  const annotations = req.pod.metadata.annotations ?? {};
  const invalid = annotationsError(annotations);
  if (invalid) throw new InjectionError(`failed to run injection template: ${invalid}`);

  // extractClusterAndNetwork: values, then the webhook path, then the pod's network label.
  const cluster = proxyEnvs.ISTIO_META_CLUSTER_ID || req.settings.clusterName;
  const network = req.pod.metadata.labels?.[NETWORK_LABEL] ?? (proxyEnvs.ISTIO_META_NETWORK || req.settings.network);
  if (cluster !== "") proxyEnvs.ISTIO_META_CLUSTER_ID = cluster;
  if (network !== "") proxyEnvs.ISTIO_META_NETWORK = network;

  const data = templateData(req, proxyConfig);

  let merged = req.pod;
  let templatePod: Pod = { metadata: {}, spec: { containers: [] } };
  const nativeAnnotation = merged.metadata.annotations?.["sidecar.istio.io/nativeSidecar"];
  const native = nativeAnnotation === "true" || (nativeAnnotation !== "false" && req.settings.nativeSidecars);
  for (const name of selectTemplates(req.pod, req.settings)) {
    const builtIn = Object.keys(TEMPLATES).join(", ");
    if (req.settings.customTemplates.includes(name)) {
      throw new InjectionError(
        `failed to run injection template: requested template "${name}" is a Go template of the injector config, which Sluice does not run; built-in templates: ${builtIn}`,
      );
    }
    if (!Object.hasOwn(TEMPLATES, name)) {
      throw new InjectionError(
        `failed to run injection template: requested template "${name}" not found; have ${builtIn}`,
      );
    }
    const overlay = TEMPLATES[name](data);
    templatePod = strategicMergePod(templatePod, overlay);
    // A user's istio-proxy customisation sits in `containers`; with native sidecars the template puts
    // the proxy in `initContainers`, so the customisation moves there before the merge.
    if (
      native &&
      findContainer(PROXY_CONTAINER, templatePod.spec.initContainers) &&
      findContainer(PROXY_CONTAINER, merged.spec.containers)
    ) {
      merged = clone(merged);
      const proxy = findContainer(PROXY_CONTAINER, merged.spec.containers) as Container;
      merged.spec.containers = merged.spec.containers.filter((c) => c !== proxy);
      merged.spec.initContainers = [...(merged.spec.initContainers ?? []), proxy];
    }
    merged = strategicMergePod(merged, overlay);
  }
  return { merged, templatePod };
}

/** The templates' inputs for the request's pod (Istio's SidecarTemplateData), a previous injection stripped. */
function templateData(req: InjectionRequest, proxyConfig: ProxyConfig): TemplateData {
  const stripped = reinsertOverrides(stripPod(req.pod, req.mesh));
  const owner = req.owner ?? deployMetaFromPod(req.pod);
  return {
    pod: stripped,
    typeMeta: owner.typeMeta,
    deploy: owner.deploy,
    proxyConfig,
    mesh: req.mesh,
    settings: req.settings,
    nativeSidecar: req.settings.nativeSidecars,
    proxyImage: imageUrl(req.settings, req.settings.proxyImage, asString(proxyConfig.image?.imageType), stripped),
    proxyInitImage: imageUrl(req.settings, req.settings.proxyInitImage, "", stripped),
  };
}

/** The pod /debug/inject renders the templates for: one container, in the default namespace. */
const SAMPLE_POD: Pod = {
  metadata: { name: "sample", namespace: "default", labels: { app: "sample" } },
  spec: { containers: [{ name: "app", image: "app:latest" }] },
};

/**
 * Each injection template rendered for a sample pod, as YAML (/debug/inject). Istio lists its
 * templates' Go template texts; Sluice's templates are functions, so what they produce is shown.
 */
export function renderedTemplates(mesh: MeshConfig, settings: InjectionSettings): Record<string, string> {
  const req: InjectionRequest = { pod: SAMPLE_POD, mesh, settings };
  const data = templateData(req, effectiveProxyConfig(mesh, [], SAMPLE_POD.metadata));
  return Object.fromEntries(Object.entries(TEMPLATES).map(([name, template]) => [name, stringify(template(data))]));
}

/** The pod's `inject.istio.io/templates`, else the defaults, each alias replaced by what it names. */
function selectTemplates(pod: Pod, settings: InjectionSettings): string[] {
  const requested = pod.metadata.annotations?.[TEMPLATES_ANNOTATION];
  const names = requested === undefined ? settings.defaultTemplates : requested.split(",").map((name) => name.trim());
  return names.flatMap((name) => (Object.hasOwn(settings.aliases, name) ? settings.aliases[name] : [name]));
}

/** `hub/name:tag`, with the image type (pod annotation, proxy config, values variant) as a tag suffix. */
export function imageUrl(
  settings: InjectionSettings,
  name: string,
  imageType: string,
  pod: { metadata: { annotations?: Record<string, string> } },
): string {
  const type = pod.metadata.annotations?.["sidecar.istio.io/proxyImageType"] ?? (imageType || settings.variant);
  let tag = settings.tag;
  if (type !== "") {
    for (const known of ["distroless", "debug"]) {
      if (tag.endsWith(`-${known}`)) {
        tag = tag.slice(0, -(known.length + 1));
        break;
      }
    }
    if (type !== "default") tag = `${tag}-${type}`;
  }
  return `${settings.hub}/${name}:${tag}`;
}

function parseStatus(pod: Pod): SidecarStatus | undefined {
  const text = pod.metadata.annotations?.[STATUS_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as SidecarStatus;
  } catch {
    return undefined;
  }
}

function parseOverrides(pod: Pod): Overrides {
  const text = pod.metadata.annotations?.[OVERRIDES_ANNOTATION];
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as Overrides;
  } catch (err) {
    throw new InjectionError(`failed to run injection template: ${(err as Error).message}`);
  }
}

/** The pod without what a previous injection added, so that injecting twice changes nothing. */
function stripPod(pod: Pod, mesh: MeshConfig): Pod {
  const status = parseStatus(pod);
  if (!status) return pod;
  const out = clone(pod);
  const injected = new Set(status.containers ?? []);
  const injectedInit = new Set(status.initContainers ?? []);
  out.spec.containers = out.spec.containers.filter((c) => !injected.has(c.name));
  if (out.spec.initContainers)
    out.spec.initContainers = out.spec.initContainers.filter((c) => !injectedInit.has(c.name));
  const statusPort = String(mesh.defaultConfig?.statusPort ?? 15020);
  if (prometheusPort(out) === statusPort) clearPrometheusAnnotations(out);
  if (out.metadata.annotations) delete out.metadata.annotations[STATUS_ANNOTATION];
  return out;
}

/** Containers a user customised in an earlier injection come back before the templates run. */
function reinsertOverrides(pod: Pod): Pod {
  const overrides = parseOverrides(pod);
  if (!overrides.containers && !overrides.initContainers) return pod;
  const out = clone(pod);
  for (const c of overrides.containers ?? []) {
    if (!findContainer(c.name, out.spec.containers)) out.spec.containers.push(c);
  }
  for (const c of overrides.initContainers ?? []) {
    if (!findContainer(c.name, out.spec.initContainers))
      out.spec.initContainers = [...(out.spec.initContainers ?? []), c];
  }
  return out;
}

/** Istio's reapplyOverwrittenContainers: a user's own istio-proxy (or istio-init) fields win over the template's. */
function reapplyUserContainers(merged: Pod, original: Pod, templatePod: Pod, proxyConfig: ProxyConfig): Pod {
  const existing = parseOverrides(original);
  const status = parseStatus(original);
  const overrides: Overrides = {};
  let final = merged;
  const userVersion = (c: Container, fromOverrides: Container[] | undefined, fromPod: Container | undefined) => {
    const match = findContainer(c.name, fromOverrides) ?? fromPod;
    if (!match) return undefined;
    const overlay = clone(match);
    if (overlay.image === "auto") delete overlay.image;
    return overlay;
  };
  for (const c of templatePod.spec.containers) {
    if (status?.containers?.includes(c.name)) continue;
    const overlay = userVersion(c, existing.containers, findContainer(c.name, original.spec.containers));
    if (!overlay) continue;
    overrides.containers = [...(overrides.containers ?? []), overlay];
    final = strategicMergePod(final, { spec: { containers: [overlay] } });
  }
  for (const c of templatePod.spec.initContainers ?? []) {
    if (status?.initContainers?.includes(c.name)) continue;
    const fromPod =
      findContainer(c.name, original.spec.containers) ?? findContainer(c.name, original.spec.initContainers);
    const overlay = userVersion(c, existing.initContainers, fromPod);
    if (!overlay) continue;
    overrides.initContainers = [...(overrides.initContainers ?? []), overlay];
    final = strategicMergePod(final, { spec: { initContainers: [overlay] } });
  }
  final = clone(final);
  if (!status && (overrides.containers || overrides.initContainers)) {
    final.metadata.annotations = { ...final.metadata.annotations, [OVERRIDES_ANNOTATION]: JSON.stringify(overrides) };
  }
  adjustInitContainerUser(final, original, proxyConfig);
  return final;
}

/** A user's istio-proxy running as another user: the init container must exempt that user's traffic instead. */
function adjustInitContainerUser(final: Pod, original: Pod, proxyConfig: ProxyConfig): void {
  const user = findSidecar(original)?.securityContext;
  if (user?.runAsUser === undefined && user?.runAsGroup === undefined) return;
  const init =
    findContainer(INIT_CONTAINER, final.spec.initContainers) ??
    findContainer(VALIDATION_CONTAINER, final.spec.initContainers);
  if (!init) return;
  const tproxy =
    proxyConfig.interceptionMode === "TPROXY" ||
    final.metadata.annotations?.["sidecar.istio.io/interceptionMode"] === "TPROXY";
  const sidecar = findSidecar(final);
  if (tproxy && user.runAsUser !== undefined && sidecar?.securityContext) sidecar.securityContext.runAsUser = 0;
  if (!tproxy && init.name === VALIDATION_CONTAINER) {
    init.securityContext ??= {};
    if (user.runAsUser !== undefined) init.securityContext.runAsUser = user.runAsUser;
    if (user.runAsGroup !== undefined) init.securityContext.runAsGroup = user.runAsGroup;
  }
  if (!user.runAsUser) return;
  const args = init.args ?? [];
  const index = args.indexOf("-u");
  if (index >= 0) args[index + 1] = String(user.runAsUser);
}

function postProcess(
  pod: Pod,
  templatePod: Pod,
  req: InjectionRequest,
  proxyConfig: ProxyConfig,
  proxyEnvs: Record<string, string>,
): void {
  pod.metadata.annotations ??= {};
  pod.metadata.labels ??= {};
  overwriteClusterEnv(pod, proxyEnvs);
  applyPrometheusMerge(pod, req.mesh);
  applySecurePrometheusPort(pod);
  applyProbeRewrite(pod, req);
  if (proxyEnvs.ISTIO_META_NETWORK !== undefined) pod.metadata.labels[NETWORK_LABEL] = proxyEnvs.ISTIO_META_NETWORK;
  pod.metadata.annotations[STATUS_ANNOTATION] = injectionStatus(templatePod, req.settings.revision);
  Object.assign(pod.metadata.annotations, req.settings.injectedAnnotations);
  reorderContainers(
    pod,
    proxyConfig.holdApplicationUntilProxyStarts === true || req.settings.holdApplicationUntilProxyStarts,
  );
}

/** Cluster and network from the webhook path replace the template's values, sorted at the end of the env. */
function overwriteClusterEnv(pod: Pod, proxyEnvs: Record<string, string>): void {
  const sidecar = findSidecar(pod);
  const names = Object.keys(proxyEnvs).sort();
  if (!sidecar || names.length === 0) return;
  sidecar.env = [
    ...(sidecar.env ?? []).filter((e) => !(e.name in proxyEnvs)),
    ...names.map((name) => ({ name, value: proxyEnvs[name] })),
  ];
}

function injectionStatus(templatePod: Pod, revision: string): string {
  const names = (list: { name: string }[] | undefined) => (list && list.length > 0 ? list.map((x) => x.name) : null);
  const status: SidecarStatus = {
    initContainers: names(templatePod.spec.initContainers),
    containers: names(templatePod.spec.containers),
    volumes: names(templatePod.spec.volumes),
    imagePullSecrets: names(templatePod.spec.imagePullSecrets),
    revision: revision || "default",
  };
  return JSON.stringify(status);
}

// ---- Prometheus: the agent merges the application's metrics with Envoy's on the status port.

/** Prometheus' SanitizeLabelName: `prometheus.io/scrape` → `prometheus_io_scrape`. */
function sanitize(name: string): string {
  return name.replace(/[^a-zA-Z0-9_]/g, "_");
}

function annotationBySanitizedName(pod: Pod, name: string): string | undefined {
  for (const [key, value] of Object.entries(pod.metadata.annotations ?? {})) if (sanitize(key) === name) return value;
  return undefined;
}

function prometheusPort(pod: Pod): string | undefined {
  return annotationBySanitizedName(pod, "prometheus_io_port");
}

const PROMETHEUS_ANNOTATIONS = new Set([
  "prometheus_io_path",
  "prometheus_io_port",
  "prometheus_io_scrape",
  "prometheus_istio_io_scrape_targets",
]);

function clearPrometheusAnnotations(pod: Pod): void {
  const annotations = pod.metadata.annotations ?? {};
  for (const key of Object.keys(annotations)) if (PROMETHEUS_ANNOTATIONS.has(sanitize(key))) delete annotations[key];
}

function applyPrometheusMerge(pod: Pod, mesh: MeshConfig): void {
  const scrapeText = annotationBySanitizedName(pod, "prometheus_io_scrape");
  if ((scrapeText === undefined ? undefined : parseGoBool(scrapeText)) === false) return;
  const mergeText = pod.metadata.annotations?.["prometheus.istio.io/merge-metrics"];
  const merge = (mergeText === undefined ? undefined : parseGoBool(mergeText)) ?? mesh.enablePrometheusMerge ?? true;
  if (!merge) return;
  const target = String(mesh.defaultConfig?.statusPort ?? 15020);
  if (prometheusPort(pod) === target) return;
  const scrape: { scrape: string; path: string; port: string; targets?: { port: string; path: string }[] } = {
    scrape: scrapeText ?? "",
    path: annotationBySanitizedName(pod, "prometheus_io_path") ?? "",
    port: prometheusPort(pod) ?? "",
  };
  const targets = parseScrapeTargets(annotationBySanitizedName(pod, "prometheus_istio_io_scrape_targets") ?? "");
  if (targets.length > 0) {
    scrape.targets = targets;
    scrape.port = targets[0].port;
    scrape.path = targets[0].path;
    for (const t of targets) checkScrapePort(t.port, target, "invalid prometheus scrape targets: ", "target port");
  } else if (scrape.port !== "") {
    checkScrapePort(scrape.port, target, "invalid prometheus scrape configuration: ", "port");
  }
  const sidecar = findSidecar(pod);
  if (sidecar && (scrape.scrape !== "" || scrape.path !== "" || scrape.port !== "" || scrape.targets)) {
    sidecar.env = [...(sidecar.env ?? []), { name: "ISTIO_PROMETHEUS_ANNOTATIONS", value: JSON.stringify(scrape) }];
  }
  clearPrometheusAnnotations(pod);
  Object.assign(pod.metadata.annotations ?? {}, {
    "prometheus.io/port": target,
    "prometheus.io/path": "/stats/prometheus",
    "prometheus.io/scrape": "true",
  });
}

/** The agent's status server's "port:path,port:path" list; the path defaults to /metrics. */
function parseScrapeTargets(text: string): { port: string; path: string }[] {
  const targets: { port: string; path: string }[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const colon = entry.indexOf(":");
    const port = (colon < 0 ? entry : entry.slice(0, colon)).trim();
    // Istio logs and ignores an annotation with an empty port.
    if (port === "") return [];
    const path = colon < 0 ? "" : entry.slice(colon + 1).trim();
    targets.push({ port, path: path || "/metrics" });
  }
  return targets;
}

/** Ports the proxy and agent own: scraping them would not reach the application. */
const ISTIO_RESERVED_PORTS: Readonly<Record<string, string>> = {
  "15000": "Envoy admin",
  "15001": "outbound traffic capture",
  "15004": "pilot debug",
  "15006": "inbound traffic capture",
  "15008": "HBONE tunnel",
  "15020": "pilot-agent status / merged Prometheus",
  "15021": "Envoy health",
  "15053": "DNS proxy",
  "15090": "Envoy Prometheus (already merged)",
};

function checkScrapePort(text: string, agentPort: string, prefix: string, what: string): void {
  const port = /^[+-]?[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  const fail = (message: string) => {
    throw new InjectionError(`failed to process pod: ${prefix}${message}`);
  };
  if (!(port >= 1 && port <= 65535)) fail(`invalid ${what} ${goQuote(text)}`);
  const canonical = String(port);
  if (canonical === agentPort) fail(`${what} ${text} conflicts with agent port`);
  const reserved = ISTIO_RESERVED_PORTS[canonical];
  if (reserved) fail(`${what} ${text} is reserved for Istio (${reserved}) and cannot be scraped`);
}

function applySecurePrometheusPort(pod: Pod): void {
  if (annotationBySanitizedName(pod, "prometheus_istio_io_secure_port") !== undefined) return;
  const port = findSidecar(pod)?.env?.find((e) => e.name === "ENVOY_SECURE_MERGED_METRICS_PORT")?.value;
  if (port && port !== "0") (pod.metadata.annotations ?? {})["prometheus.istio.io/secure-port"] = port;
}

// ---- Probes

function applyProbeRewrite(pod: Pod, req: InjectionRequest): void {
  const sidecar = findSidecar(pod);
  if (!sidecar || !shouldRewriteProbes(pod.metadata.annotations ?? {}, req.settings.rewriteAppHTTPProbe)) return;
  const meshStatusPort = req.mesh.defaultConfig?.statusPort ?? 15020;
  const probers = dumpAppProbers(pod, meshStatusPort);
  if (probers !== "") {
    const env = sidecar.env ?? [];
    const existing = env.find((e) => e.name === KUBE_APP_PROBERS_ENV);
    if (pod.metadata.annotations?.[STATUS_ANNOTATION] !== undefined && existing?.value !== undefined) {
      // Re-injection: probes already pointing at the agent keep their recorded targets.
      const merged: Record<string, unknown> = { ...JSON.parse(probers), ...JSON.parse(existing.value) };
      // Go marshals a map with its keys sorted.
      existing.value = JSON.stringify(
        Object.fromEntries(
          Object.keys(merged)
            .sort()
            .map((k) => [k, merged[k]]),
        ),
      );
    } else {
      sidecar.env = [...env, { name: KUBE_APP_PROBERS_ENV, value: probers }];
    }
  }
  const annotated = pod.metadata.annotations?.["status.sidecar.istio.io/port"];
  rewriteProbes(pod, annotated === undefined ? meshStatusPort : Number.parseInt(annotated, 10) || 0);
}

/** Resource quantities as the API server stores them ("2000m" → "2"), as Istio's typed round trip prints them. */
function canonicalizeResources(pod: Pod): void {
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    const resources = c.resources as Record<string, Record<string, string> | undefined> | undefined;
    for (const list of [resources?.requests, resources?.limits]) {
      for (const [name, value] of Object.entries(list ?? {})) list![name] = canonicalQuantity(String(value));
    }
  }
}

// ---- Order: the proxy last (first when the app waits for it), init containers around it.

function moveContainer(list: Container[], name: string, where: "first" | "last" | "remove"): Container[] {
  const match = list.find((c) => c.name === name);
  if (!match) return list;
  const rest = list.filter((c) => c !== match);
  if (where === "remove") return rest;
  return where === "first" ? [match, ...rest] : [...rest, match];
}

function reorderContainers(pod: Pod, hold: boolean): void {
  const spec = pod.spec;
  spec.containers = moveContainer(spec.containers, PROXY_CONTAINER, hold ? "first" : "last");
  let init = spec.initContainers ?? [];
  if (findContainer(PROXY_CONTAINER, init)) {
    for (const name of [CORE_DUMP_CONTAINER, PROXY_CONTAINER, VALIDATION_CONTAINER, INIT_CONTAINER]) {
      init = moveContainer(init, name, "first");
    }
  } else {
    init = moveContainer(init, VALIDATION_CONTAINER, "first");
    init = moveContainer(init, INIT_CONTAINER, "last");
    init = moveContainer(init, CORE_DUMP_CONTAINER, "last");
  }
  if (spec.initContainers !== undefined || init.length > 0) spec.initContainers = init;
}
