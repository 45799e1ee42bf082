// Application probe rewriting (Istio's app_probe.go): HTTP, TCP and gRPC probes and HTTP/TCP lifecycle
// hooks of the application containers are pointed at the agent's status port
// (`/app-health/<container>/readyz|livez|startupz`, `/app-lifecycle/<container>/prestopz|poststartz`),
// and the original checks go to the agent in ISTIO_KUBE_APP_PROBERS.
import { parseGoBool } from "../../util/index.ts";
import type { Container, LifecycleHandler, Pod, PortAction, Probe } from "./pod.ts";
import { PROXY_CONTAINER } from "./pod.ts";

export const KUBE_APP_PROBERS_ENV = "ISTIO_KUBE_APP_PROBERS";

/** `sidecar.istio.io/rewriteAppHTTPProbers` when it is a boolean, else the injector's setting. */
export function shouldRewriteProbes(annotations: Record<string, string>, setting: boolean): boolean {
  const value = annotations["sidecar.istio.io/rewriteAppHTTPProbers"];
  return (value === undefined ? undefined : parseGoBool(value)) ?? setting;
}

function proberUrls(container: string) {
  return {
    readyz: `/app-health/${container}/readyz`,
    livez: `/app-health/${container}/livez`,
    startupz: `/app-health/${container}/startupz`,
    prestopz: `/app-lifecycle/${container}/prestopz`,
    poststartz: `/app-lifecycle/${container}/poststartz`,
  };
}

interface Prober {
  httpGet?: PortAction;
  tcpSocket?: PortAction;
  grpc?: Probe["grpc"];
  timeoutSeconds?: number;
}

/** Istio's DumpAppProbers: the JSON for ISTIO_KUBE_APP_PROBERS, or "" when no container has a probe to move. */
export function dumpAppProbers(pod: Pod, statusPort: number): string {
  const out: Record<string, Prober> = {};
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    if (c.name === PROXY_CONTAINER) continue;
    const urls = proberUrls(c.name);
    const ports = new Map<string, number>();
    for (const p of c.ports ?? []) if (p.name) ports.set(p.name, p.containerPort);
    const add = (url: string, prober: Prober | undefined) => {
      const resolved = resolveNamedPort(prober, ports, statusPort);
      if (resolved) out[url] = resolved;
    };
    add(urls.readyz, probeToProber(c.readinessProbe));
    add(urls.livez, probeToProber(c.livenessProbe));
    add(urls.startupz, probeToProber(c.startupProbe));
    add(urls.prestopz, handlerToProber(c.lifecycle?.preStop));
    add(urls.poststartz, handlerToProber(c.lifecycle?.postStart));
  }
  const keys = Object.keys(out).sort();
  if (keys.length === 0) return "";
  // Go marshals map keys sorted, and a struct's fields in declaration order.
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, orderProber(out[k])])));
}

function orderProber(p: Prober): Prober {
  const out: Prober = {};
  if (p.httpGet) out.httpGet = orderAction(p.httpGet, ["path", "port", "host", "scheme", "httpHeaders"]);
  if (p.tcpSocket) out.tcpSocket = orderAction(p.tcpSocket, ["port", "host"]);
  // GRPCAction's service has no omitempty: Go writes an unset one as null.
  if (p.grpc) out.grpc = { port: p.grpc.port, service: p.grpc.service ?? null };
  if (p.timeoutSeconds) out.timeoutSeconds = p.timeoutSeconds;
  return out;
}

function orderAction(action: PortAction, fields: string[]): PortAction {
  const out: PortAction = {};
  for (const f of fields) if (action[f] !== undefined && action[f] !== "") out[f] = action[f];
  return out;
}

function probeToProber(probe: Probe | undefined): Prober | undefined {
  if (!probe) return undefined;
  const timeoutSeconds = probe.timeoutSeconds;
  if (probe.httpGet) return { httpGet: structuredClone(probe.httpGet), timeoutSeconds };
  if (probe.tcpSocket) return { tcpSocket: structuredClone(probe.tcpSocket), timeoutSeconds };
  if (probe.grpc) return { grpc: structuredClone(probe.grpc), timeoutSeconds };
  return undefined;
}

function handlerToProber(handler: LifecycleHandler | undefined): Prober | undefined {
  if (handler?.httpGet) return { httpGet: structuredClone(handler.httpGet) };
  if (handler?.tcpSocket) return { tcpSocket: structuredClone(handler.tcpSocket) };
  return undefined;
}

/** Named ports become numbers; a probe of an unknown name, or of the status port itself, is not moved. */
function resolveNamedPort(p: Prober | undefined, ports: Map<string, number>, statusPort: number): Prober | undefined {
  if (!p || p.grpc) return p;
  const action = p.httpGet ?? p.tcpSocket;
  if (!action) return undefined;
  if (typeof action.port === "string") {
    const port = ports.get(action.port);
    if (port === undefined) return undefined;
    action.port = port;
  } else if (action.port === statusPort) {
    return undefined;
  }
  return p;
}

/** Points every application probe and HTTP/TCP lifecycle hook at the agent's status port. */
export function rewriteProbes(pod: Pod, statusPort: number): void {
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    if (c.name !== PROXY_CONTAINER) rewriteContainer(c, statusPort);
  }
}

function rewriteContainer(c: Container, statusPort: number): void {
  const urls = proberUrls(c.name);
  if (c.readinessProbe) c.readinessProbe = rewriteProbe(c.readinessProbe, urls.readyz, statusPort);
  if (c.livenessProbe) c.livenessProbe = rewriteProbe(c.livenessProbe, urls.livez, statusPort);
  if (c.startupProbe) c.startupProbe = rewriteProbe(c.startupProbe, urls.startupz, statusPort);
  const lifecycle = c.lifecycle;
  if (lifecycle?.preStop) lifecycle.preStop = rewriteHandler(lifecycle.preStop, urls.prestopz, statusPort);
  if (lifecycle?.postStart) lifecycle.postStart = rewriteHandler(lifecycle.postStart, urls.poststartz, statusPort);
}

function rewriteAction(action: PortAction, path: string, port: number): PortAction {
  const out: PortAction = { ...action, path, port };
  if (out.scheme === "HTTPS") out.scheme = "HTTP";
  return out;
}

function rewriteProbe(probe: Probe, path: string, port: number): Probe {
  if (probe.httpGet) return { ...probe, httpGet: rewriteAction(probe.httpGet, path, port) };
  if (probe.tcpSocket || probe.grpc) {
    const { tcpSocket: _tcp, grpc: _grpc, ...rest } = probe;
    return { ...rest, httpGet: rewriteAction({}, path, port) };
  }
  return probe;
}

function rewriteHandler(handler: LifecycleHandler, path: string, port: number): LifecycleHandler {
  if (handler.httpGet) return { ...handler, httpGet: rewriteAction(handler.httpGet, path, port) };
  if (handler.tcpSocket) {
    const { tcpSocket: _tcp, ...rest } = handler;
    return { ...rest, httpGet: rewriteAction({}, path, port) };
  }
  return handler;
}
