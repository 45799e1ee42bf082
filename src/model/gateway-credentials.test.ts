import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, snapshot } from "../../test/support/model-fixtures.ts";
import type { GatewaySpec } from "../config/types/index.ts";

const spec = (credentialName: string, mode: "SIMPLE" | "MUTUAL" = "SIMPLE"): GatewaySpec => ({
  selector: { istio: "ingressgateway" },
  servers: [
    {
      hosts: ["a.example.com"],
      port: { number: 443, name: "https", protocol: "HTTPS" },
      tls: { mode, credentialName },
    },
  ],
});
const router = (identity?: string) => ({
  configNamespace: "istio-system",
  labels: { istio: "ingressgateway" },
  verifiedIdentities: identity ? [identity] : undefined,
});
const ingressIdentity = "spiffe://cluster.local/ns/istio-system/sa/istio-ingressgateway";

test("a gateway proxy may fetch the Secrets its Gateways name in its own namespace, with -cacert for MUTUAL", () => {
  const snap = snapshot([
    cfg("Gateway", "istio-system", "simple", spec("web-cert")),
    cfg("Gateway", "istio-system", "mutual", spec("istio-system/mtls-cert", "MUTUAL")),
    cfg("Gateway", "istio-system", "other-ns-secret", spec("kubernetes://team/stolen")),
  ]);
  assert.deepEqual([...(snap.mergedGateway(router(ingressIdentity))?.verifiedCredentials ?? [])].sort(), [
    "kubernetes://istio-system/mtls-cert",
    "kubernetes://istio-system/mtls-cert-cacert",
    "kubernetes://web-cert",
  ]);
});

test("no verified identity, or one from another namespace, allows no Secret", () => {
  const snap = snapshot([cfg("Gateway", "istio-system", "simple", spec("web-cert"))]);
  assert.equal(snap.mergedGateway(router())?.verifiedCredentials.size, 0);
  assert.equal(snap.mergedGateway(router("spiffe://cluster.local/ns/team/sa/x"))?.verifiedCredentials.size, 0);
});

test("a translated Gateway naming a service account allows only that account", () => {
  const gateway = cfg("Gateway", "istio-system", "translated", spec("web-cert"), {
    annotations: { "internal.istio.io/service-account-name": "web-istio" },
  });
  const snap = snapshot([gateway]);
  assert.equal(snap.mergedGateway(router(ingressIdentity))?.verifiedCredentials.size, 0);
  const allowed = snap.mergedGateway(router("spiffe://cluster.local/ns/istio-system/sa/web-istio"));
  assert.deepEqual([...(allowed?.verifiedCredentials ?? [])], ["kubernetes://web-cert"]);
});
