// SDS serves gateway credentials from Secrets only to routers allowed to read them, and NDS gives a
// sidecar the VIPs (or headless endpoint IPs) of the services it sees.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type admin, type core, tls, unpackAny } from "../../src/api/index.ts";
import {
  loadState,
  type ProxySpec,
  type TranslateState,
  translate,
  translateProxy,
} from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG, kindKey, type ObjectKey } from "../../src/config/index.ts";
import { type ProxyNode, pushRequest } from "../../src/model/index.ts";
import type { WatchedResource } from "../../src/xds/generator.ts";
import { buildNameTable, ndsGenerator } from "../../src/xds/generators/nds.ts";
import { sdsGenerator } from "../../src/xds/generators/sds.ts";
import { storeSecrets } from "../../src/xds/generators/secrets.ts";
import { TypeUrl } from "../../src/xds/index.ts";

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
const file = join(dir, "config.yaml");
writeFileSync(file, CONFIG);

const mesh = DEFAULT_MESH_CONFIG;
const ROUTER: ProxySpec = {
  type: "router",
  ip: "10.0.0.2",
  namespace: "istio-system",
  labels: { istio: "ingressgateway" },
  id: "gw.istio-system",
};
const SIDECAR: ProxySpec = {
  type: "sidecar",
  ip: "10.0.0.3",
  namespace: "apps",
  labels: { app: "web" },
  id: "web.apps",
};

function load(): TranslateState {
  const loaded = loadState([file], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  return loaded.state;
}

function watched(typeUrl: string, names: string[] = []): WatchedResource {
  return { typeUrl, resourceNames: new Set(names), wildcard: names.length === 0 };
}

const proxyOf = (spec: ProxySpec) => translateProxy(spec, mesh, "cluster.local");

function secretsOf(dump: admin.ConfigDump): tls.Secret[] {
  const section = dump.configs
    .map((c) => unpackAny(c))
    .find((m) => m?.$typeName === "envoy.admin.v3.SecretsConfigDump");
  return (
    (section as admin.SecretsConfigDump | undefined)?.dynamicActiveSecrets.flatMap((s) =>
      s.secret ? [unpackAny(s.secret, tls.SecretSchema) ?? []].flat() : [],
    ) ?? []
  );
}

/** The inline bytes of a DataSource, as text. */
function text(source: core.DataSource | undefined): string | undefined {
  return source?.specifier.case === "inlineBytes" ? new TextDecoder().decode(source.specifier.value) : undefined;
}

test("a router's dump carries its servers' certificates (keys redacted), a MUTUAL server's CA from the same Secret", () => {
  const result = translate([file], ROUTER, { mesh, domainSuffix: "cluster.local", types: ["SDS"] });
  assert.ok(result.dump, result.problems?.join("\n"));
  const secrets = secretsOf(result.dump);
  assert.deepEqual(
    secrets.map((s) => s.name),
    ["kubernetes://cred", "kubernetes://cred-cacert", "kubernetes://generic"],
  );
  const [cert, ca] = secrets.map((s) => s.type);
  assert.equal(cert.case, "tlsCertificate");
  assert.equal(text(cert.case === "tlsCertificate" ? cert.value.certificateChain : undefined), "CERT");
  assert.equal(text(cert.case === "tlsCertificate" ? cert.value.privateKey : undefined), "[redacted]");
  assert.equal(text(ca.case === "validationContext" ? ca.value.trustedCa : undefined), "CA");
});

test("SDS serves only what the proxy may read, on pushes that may change credentials", () => {
  const state = load();
  const sds = sdsGenerator(storeSecrets(state.store));
  const full = pushRequest({ full: true, push: state.push });
  const ask = (proxy: ProxyNode, names: string[], req = full) =>
    sds.generate(proxy, watched(TypeUrl.Secret, names), req)?.resources.map((r) => r.name);

  const router = proxyOf(ROUTER);
  // The gateway's own credential, not a Secret of another namespace its Gateways do not name.
  assert.deepEqual(ask(router, ["kubernetes://cred", "kubernetes://apps/other"]), ["kubernetes://cred"]);
  const served = sds.generate(router, watched(TypeUrl.Secret, ["kubernetes://cred"]), full)?.resources[0].resource;
  const key = (served as tls.Secret).type;
  assert.equal(text(key.case === "tlsCertificate" ? key.value.privateKey : undefined), "KEY");
  // Generic Secrets hold cert/key (here as stringData).
  const generic = sds.generate(router, watched(TypeUrl.Secret, ["kubernetes://generic"]), full)?.resources[0].resource;
  const chain = (generic as tls.Secret | undefined)?.type;
  assert.equal(text(chain?.case === "tlsCertificate" ? chain.value.certificateChain : undefined), "GENERICCERT");
  // Unauthenticated (plaintext port): nothing.
  assert.equal(ask({ ...router, verifiedIdentities: undefined }, ["kubernetes://cred"]), undefined);
  // A sidecar gets no Secret, not even of its own namespace (Sluice cannot ask Kubernetes RBAC).
  assert.deepEqual(ask(proxyOf(SIDECAR), ["kubernetes://other", "kubernetes://istio-system/cred"]), []);
  // Endpoint pushes, and full pushes of unrelated config, leave secrets alone.
  assert.equal(ask(router, ["kubernetes://cred"], pushRequest({ full: false, push: state.push })), undefined);
  const vs: ObjectKey = { kind: kindKey("networking.istio.io", "VirtualService"), namespace: "apps", name: "x" };
  assert.equal(
    ask(router, ["kubernetes://cred"], pushRequest({ full: true, push: state.push, configsUpdated: [vs] })),
    undefined,
  );
  const secret: ObjectKey = { kind: kindKey("", "Secret"), namespace: "istio-system", name: "cred" };
  assert.deepEqual(
    ask(router, ["kubernetes://cred"], pushRequest({ full: true, push: state.push, configsUpdated: [secret] })),
    ["kubernetes://cred"],
  );
});

test("NDS gives a sidecar service VIPs and headless endpoint IPs; routers get no name table", () => {
  const state = load();
  const sidecar = proxyOf(SIDECAR);
  const table = buildNameTable(state.push, sidecar, state.registry)?.table ?? {};
  const web = table["web.apps.svc.cluster.local"];
  assert.deepEqual(
    { ips: web?.ips, registry: web?.registry, shortname: web?.shortname, namespace: web?.namespace },
    { ips: ["10.96.0.20"], registry: "Kubernetes", shortname: "web", namespace: "apps" },
  );
  const db = table["db.internal"];
  assert.deepEqual({ ips: db?.ips, shortname: db?.shortname }, { ips: ["10.1.0.5"], shortname: "" });
  assert.equal(buildNameTable(state.push, proxyOf(ROUTER), state.registry), undefined);

  const nds = ndsGenerator(state.registry);
  const endpointPush = (hostname: string) =>
    pushRequest({
      full: false,
      push: state.push,
      configsUpdated: [{ kind: kindKey("networking.istio.io", "ServiceEntry"), namespace: "apps", name: hostname }],
    });
  // Endpoint changes matter only for headless services, whose IPs are their endpoints'.
  assert.equal(nds.generate(sidecar, watched(TypeUrl.NameTable), endpointPush("db.internal"))?.resources.length, 1);
  assert.equal(
    nds.generate(sidecar, watched(TypeUrl.NameTable), endpointPush("web.apps.svc.cluster.local")),
    undefined,
  );
  assert.equal(
    nds.generate(proxyOf(ROUTER), watched(TypeUrl.NameTable), pushRequest({ full: true, push: state.push })),
    undefined,
  );
});
