// The stateful session filter's place: outbound and gateway managers only, with the feature on, after
// istio.stats and before the dynamic forward proxy and the router.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { dfpCommon } from "../../api/index.ts";
import { buildHttpFilters } from "./index.ts";

const names = (context: Parameters<typeof buildHttpFilters>[0]) => buildHttpFilters(context).map((f) => f.name);

test("outbound and gateway managers get the empty stateful session filter when persistent sessions are on", () => {
  const cache = create(dfpCommon.DnsCacheConfigSchema, { name: "*.example.com_dfp_dns_cache" });
  assert.deepEqual(
    names({
      listenerClass: "sidecarOutbound",
      persistentSessions: true,
      prometheusStats: true,
      forwardProxyDnsCache: cache,
    }).slice(-4),
    [
      "istio.stats",
      "envoy.filters.http.stateful_session",
      "envoy.filters.http.dynamic_forward_proxy",
      "envoy.filters.http.router",
    ],
  );
  assert.ok(
    names({ listenerClass: "gateway", persistentSessions: true }).includes("envoy.filters.http.stateful_session"),
  );
});

test("never inbound, and not without the feature", () => {
  assert.ok(
    !names({ listenerClass: "sidecarInbound", persistentSessions: true }).includes(
      "envoy.filters.http.stateful_session",
    ),
  );
  assert.ok(!names({ listenerClass: "sidecarOutbound" }).includes("envoy.filters.http.stateful_session"));
});
