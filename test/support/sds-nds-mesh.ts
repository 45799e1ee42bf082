// The mesh test/translate/sds.test.ts and nds.test.ts share: an ingress Gateway with a MUTUAL and a
// SIMPLE HTTPS server naming Secrets (a kubernetes.io/tls one with a CA, a generic one), a Secret of
// another namespace, a Service and a headless ServiceEntry with a WorkloadEntry; the router and the
// sidecar that read it. Importing this writes the config to a temporary file, removed after the tests.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { loadState, type ProxySpec, type TranslateState, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { WatchedResource } from "../../src/xds/generator.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const CONFIG = `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 443, name: https, protocol: HTTPS}
    hosts: ["*"]
    tls: {mode: MUTUAL, credentialName: cred}
  - port: {number: 8443, name: https-generic, protocol: HTTPS}
    hosts: ["generic.example.com"]
    tls: {mode: SIMPLE, credentialName: generic}
---
apiVersion: v1
kind: Secret
metadata: {name: generic, namespace: istio-system}
stringData: {cert: GENERICCERT, key: GENERICKEY}
---
apiVersion: v1
kind: Secret
metadata: {name: cred, namespace: istio-system}
type: kubernetes.io/tls
data: {tls.crt: ${b64("CERT")}, tls.key: ${b64("KEY")}, ca.crt: ${b64("CA")}}
---
apiVersion: v1
kind: Secret
metadata: {name: other, namespace: apps}
stringData: {cert: APPCERT, key: APPKEY}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: apps}
spec: {clusterIP: 10.96.0.20, ports: [{name: http, port: 80}], selector: {app: web}}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: apps}
spec:
  hosts: [db.internal]
  location: MESH_INTERNAL
  resolution: NONE
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  workloadSelector: {labels: {app: db}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: db-1, namespace: apps}
spec: {address: 10.1.0.5, labels: {app: db}}
`;

const dir = mkdtempSync(join(tmpdir(), "sluice-sds-"));
after(() => rmSync(dir, { recursive: true, force: true }));
/** The config file, in a temporary directory removed after the tests. */
export const file = join(dir, "config.yaml");
writeFileSync(file, CONFIG);

export const mesh = DEFAULT_MESH_CONFIG;
export const ROUTER: ProxySpec = {
  type: "router",
  ip: "10.0.0.2",
  namespace: "istio-system",
  labels: { istio: "ingressgateway" },
  id: "gw.istio-system",
};
export const SIDECAR: ProxySpec = {
  type: "sidecar",
  ip: "10.0.0.3",
  namespace: "apps",
  labels: { app: "web" },
  id: "web.apps",
};

export function load(): TranslateState {
  const loaded = loadState([file], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  return loaded.state;
}

export function watched(typeUrl: string, names: string[] = []): WatchedResource {
  return { typeUrl, resourceNames: new Set(names), wildcard: names.length === 0 };
}

export const proxyOf = (spec: ProxySpec) => translateProxy(spec, mesh, "cluster.local");
