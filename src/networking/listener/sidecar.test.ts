import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkedListenersJson, meshFrom, proxyFrom, service } from "../../../test/support/listeners.ts";
import { buildSidecarListeners } from "./index.ts";

const reviews = service({
  hostname: "reviews.default.svc.cluster.local",
  addresses: ["10.96.0.10"],
  ports: [{ name: "http", port: 9080, protocol: "HTTP", targetPort: 9080 }],
});

describe("a sidecar's LDS (listener_builder.go getListeners)", () => {
  it("outbound per-port listeners, HTTP proxy, virtualOutbound, then virtualInbound — all valid for Envoy", () => {
    const listeners = buildSidecarListeners({
      proxy: proxyFrom({ metadata: { HTTP_PROXY_PORT: "15080" } }),
      mesh: meshFrom(),
      services: [reviews],
      ports: [{ targetPort: 9080, servicePort: 9080, protocol: "HTTP", hostname: reviews.hostname }],
      mtls: { mode: "PERMISSIVE", perPort: new Map() },
      trustDomains: ["cluster.local"],
    });
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["0.0.0.0_9080", "127.0.0.1_15080", "virtualOutbound", "virtualInbound"],
    );
    assert.equal(checkedListenersJson(listeners).length, 4);
  });
});
