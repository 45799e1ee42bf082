// Where a Sidecar ingress listener's inbound cluster delivers (Istio's buildInboundClustersFromSidecar).
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeProxy } from "../../test/support/cluster-fixtures.ts";
import { ingressEndpoint } from "./inbound-targets.ts";

const ipv4 = makeProxy({ ipAddresses: ["10.0.0.7"] });
const ipv6 = makeProxy({ ipAddresses: ["fd00::7"] });
const dual = makeProxy({ ipAddresses: ["10.0.0.7", "fd00::7"] });

test("no defaultEndpoint: the original destination", () => {
  assert.deepEqual(ingressEndpoint(undefined, ipv4), { address: "", port: 0 });
});

test("a unix socket is kept whole, without a port", () => {
  assert.deepEqual(ingressEndpoint("unix:///var/run/app.sock", ipv4), { address: "unix:///var/run/app.sock", port: 0 });
});

test("loopback keeps its family when the proxy has it, else takes the other", () => {
  assert.deepEqual(ingressEndpoint("127.0.0.1:8080", ipv4), { address: "127.0.0.1", port: 8080 });
  assert.deepEqual(ingressEndpoint("127.0.0.1:8080", ipv6), { address: "::1", port: 8080 });
  assert.deepEqual(ingressEndpoint("127.0.0.1:8080", dual), { address: "127.0.0.1", port: 8080 });
  assert.deepEqual(ingressEndpoint("[::1]:8080", dual), { address: "::1", port: 8080 });
  assert.deepEqual(ingressEndpoint("[::1]:8080", ipv4), { address: "127.0.0.1", port: 8080 });
});

test("the wildcard is the proxy's first IP of that family, else loopback of that family", () => {
  assert.deepEqual(ingressEndpoint("0.0.0.0:8080", dual), { address: "10.0.0.7", port: 8080 });
  assert.deepEqual(ingressEndpoint("[::]:8080", dual), { address: "fd00::7", port: 8080 });
  assert.deepEqual(ingressEndpoint("0.0.0.0:8080", ipv6), { address: "127.0.0.1", port: 8080 });
  assert.deepEqual(ingressEndpoint("[::]:8080", ipv4), { address: "::1", port: 8080 });
});
