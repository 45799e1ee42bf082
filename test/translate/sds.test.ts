// SDS serves gateway credentials from Secrets only to routers allowed to read them: a router's config
// dump, and what the generator serves to which proxy on which push. The mesh is
// test/support/sds-nds-mesh.ts, shared with nds.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type admin, type core, tls, unpackAny } from "../../src/api/index.ts";
import { translate } from "../../src/cli/translate-state.ts";
import { kindKey, type ObjectKey } from "../../src/config/index.ts";
import { type ProxyNode, pushRequest } from "../../src/model/index.ts";
import { sdsGenerator } from "../../src/xds/generators/sds.ts";
import { storeSecrets } from "../../src/xds/generators/secrets.ts";
import { TypeUrl } from "../../src/xds/index.ts";
import { file, load, mesh, proxyOf, ROUTER, SIDECAR, watched } from "../support/sds-nds-mesh.ts";

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
