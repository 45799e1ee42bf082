// NDS as Istio's BuildNameTable: a headless service answers its ready endpoints, each Pod with a
// subdomain gets its own name, and a ServiceEntry host without addresses answers auto-allocated
// addresses to proxies that capture DNS. The last case runs over the mesh of
// test/support/sds-nds-mesh.ts (shared with sds.test.ts): service VIPs and headless endpoint IPs for a
// sidecar, no name table for a router, and which pushes the generator answers.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { loadState, type ProxySpec, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG, kindKey } from "../../src/config/index.ts";
import { buildListeners, buildRouteConfiguration, XdsCache } from "../../src/configgen/index.ts";
import { type ProxyNode, pushRequest } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";
import { buildNameTable, ndsGenerator } from "../../src/xds/generators/nds.ts";
import { TypeUrl } from "../../src/xds/index.ts";
import { load, proxyOf, ROUTER, SIDECAR, watched } from "../support/sds-nds-mesh.ts";

/** The xDS cache these tests build with, as the discovery server's generators share one. */
const cache = new XdsCache();

const pod = (name: string, ip: string, ready: boolean, hostname = "") => `
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: db, labels: {app: mysql}}
spec: {${hostname ? `hostname: ${hostname}, ` : ""}subdomain: mysql, containers: [{name: mysql, image: mysql}]}
status:
  phase: Running
  podIP: ${ip}
  conditions: [{type: Ready, status: "${ready ? "True" : "False"}"}]
`;
const slice = (endpoints: [string, string, boolean][]) => `
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: mysql-1, namespace: db, labels: {kubernetes.io/service-name: mysql}}
addressType: IPv4
endpoints:
${endpoints
  .map(
    ([name, ip, ready]) =>
      `- {addresses: [${ip}], conditions: {ready: ${ready}}, targetRef: {kind: Pod, name: ${name}, namespace: db}}`,
  )
  .join("\n")}
ports: [{name: mysql, port: 3306}]
`;
const CONFIG = `
apiVersion: v1
kind: Service
metadata: {name: dual, namespace: db}
spec: {clusterIP: 10.96.0.50, clusterIPs: [10.96.0.50, "fd00::50"], ipFamilies: [IPv4, IPv6], ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: mysql, namespace: db}
spec: {clusterIP: None, selector: {app: mysql}, ports: [{name: mysql, port: 3306}]}
${pod("mysql-0", "10.1.0.10", true)}
${pod("mysql-1", "10.1.0.11", true, "primary")}
${pod("mysql-2", "10.1.0.12", false)}
${slice([
  ["mysql-0", "10.1.0.10", true],
  ["mysql-1", "10.1.0.11", true],
  ["mysql-2", "10.1.0.12", false],
])}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: db}
spec:
  hosts: [api.example.com]
  ports: [{number: 443, name: tls, protocol: TLS}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: web, namespace: db}
spec:
  hosts: [web.example.com]
  ports: [{number: 8080, name: http, protocol: HTTP}]
  resolution: DNS
status:
  addresses: [{host: web.example.com, value: 240.240.0.78}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: recorded, namespace: db}
spec:
  hosts: [recorded.example.com]
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  resolution: DNS
status:
  addresses: [{host: recorded.example.com, value: 240.240.0.77}, {host: recorded.example.com, value: "2001:2::f0f0:77"}]
`;

const dir = mkdtempSync(join(tmpdir(), "sluice-nds-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "config.yaml");
writeFileSync(file, CONFIG);

const CLIENT: ProxySpec = { type: "sidecar", ip: "10.0.0.3", namespace: "db", labels: { app: "client" }, id: "c.db" };
const loaded = loadState([file], DEFAULT_MESH_CONFIG, "cluster.local");
assert.ok(loaded.state, loaded.problems?.join("\n"));
const state = loaded.state;

function table(proxy: ProxyNode) {
  return buildNameTable(state.push, proxy, state.registry)?.table ?? {};
}
const plain = translateProxy(CLIENT, DEFAULT_MESH_CONFIG, "cluster.local");
const capturing: ProxyNode = { ...plain, metadata: { ...plain.metadata, DNS_CAPTURE: true } };

test("a headless service answers its ready endpoints; each Pod with a subdomain gets its own name", () => {
  const names = table(plain);
  assert.deepEqual(names["mysql.db.svc.cluster.local"]?.ips, ["10.1.0.10", "10.1.0.11"]);
  const pod0 = names["mysql-0.mysql.db.svc.cluster.local"];
  assert.deepEqual(
    { ips: pod0?.ips, namespace: pod0?.namespace, shortname: pod0?.shortname, registry: pod0?.registry },
    { ips: ["10.1.0.10"], namespace: "db", shortname: "mysql-0.mysql", registry: "Kubernetes" },
  );
  // spec.hostname names the Pod; a Pod that is not ready has no name.
  assert.deepEqual(names["primary.mysql.db.svc.cluster.local"]?.ips, ["10.1.0.11"]);
  assert.equal(names["mysql-2.mysql.db.svc.cluster.local"], undefined);
});

test("a ServiceEntry host without addresses answers those recorded in its status, only to a proxy capturing DNS", () => {
  // The proxy's family only.
  assert.deepEqual(table(capturing)["recorded.example.com"]?.ips, ["240.240.0.77"]);
  assert.equal(table(plain)["recorded.example.com"], undefined);
  // None recorded (the controller has not written them yet): no name, as in istiod.
  assert.equal(table(capturing)["api.example.com"], undefined);
});

test("with PILOT_ENABLE_IP_AUTOALLOCATE off, the in-memory allocation answers proxies that set DNS_AUTO_ALLOCATE", () => {
  const push = storePush(state.store, state.registry, DEFAULT_MESH_CONFIG, "cluster.local", undefined, {
    ipAutoallocate: false,
  });
  const names = (proxy: ProxyNode) => buildNameTable(push, proxy, state.registry)?.table ?? {};
  const asking: ProxyNode = { ...capturing, metadata: { ...capturing.metadata, DNS_AUTO_ALLOCATE: true } };
  assert.equal(names(capturing)["api.example.com"], undefined);
  const api = names(asking)["api.example.com"]?.ips ?? [];
  assert.equal(api.length, 1);
  assert.match(api[0], /^240\.240\.\d+\.\d+$/);
  // The status is not read then: the recorded host gets its in-memory address too.
  assert.notDeepEqual(names(asking)["recorded.example.com"]?.ips, ["240.240.0.77"]);
});

test("a proxy capturing DNS listens for such a TCP host on its allocated address", () => {
  const names = (proxy: ProxyNode) => buildListeners(state.push, proxy, state.registry, cache).map((l) => l.name);
  assert.ok(names(capturing).includes("240.240.0.77_5432"), names(capturing).join(" "));
  assert.ok(!names(plain).some((n) => n.startsWith("240.240.")));
});

test("its virtual host answers to the allocated address too, for a proxy capturing DNS only", () => {
  const domains = (proxy: ProxyNode) =>
    buildRouteConfiguration(state.push, proxy, "8080", cache)?.virtualHosts.find(
      (v) => v.name === "web.example.com:8080",
    )?.domains ?? [];
  const [allocated] = table(capturing)["web.example.com"]?.ips ?? [];
  assert.ok(allocated && domains(capturing).includes(allocated), domains(capturing).join(" "));
  assert.ok(!domains(plain).some((d) => d.startsWith("240.240.")));
});

test("a dual-stack service answers the cluster IPs of the proxy's families", () => {
  assert.deepEqual(table(plain)["dual.db.svc.cluster.local"]?.ips, ["10.96.0.50"]);
  const dualStack: ProxyNode = { ...plain, ipAddresses: ["10.0.0.3", "fd00::3"] };
  assert.deepEqual(table(dualStack)["dual.db.svc.cluster.local"]?.ips, ["10.96.0.50", "fd00::50"]);
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
