import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { meshFrom, proxyFrom } from "../../../test/support/listeners.ts";
import { hcm, packAny, unpackAny, uuidRequestId } from "../../api/index.ts";
import { buildHttpFilters, envoyViolations } from "../httpfilter/index.ts";
import { buildHcmFilter, buildHttpConnectionManager, type HcmOptions } from "./index.ts";

function build(
  options: Partial<HcmOptions> = {},
  mesh: JsonObject = {},
  metadata: JsonObject = {},
): hcm.HttpConnectionManager {
  const listenerClass = options.listenerClass ?? "sidecarOutbound";
  return buildHttpConnectionManager(
    { proxy: proxyFrom({ metadata }), mesh: meshFrom(mesh) },
    {
      listenerClass,
      statPrefix: "outbound_0.0.0.0_80;",
      routes: { rds: "80" },
      httpFilters: buildHttpFilters({ listenerClass }),
      ...options,
    },
  );
}

describe("HTTP connection manager (buildHTTPConnectionManager)", () => {
  it("passes Envoy's constraints for every listener class", () => {
    for (const listenerClass of ["sidecarOutbound", "sidecarInbound", "gateway"] as const) {
      assert.deepEqual(envoyViolations(hcm.HttpConnectionManagerSchema, build({ listenerClass })), [], listenerClass);
    }
  });

  it("RDS over ADS with no initial fetch timeout", () => {
    const manager = build();
    assert.ok(manager.routeSpecifier.case === "rds");
    assert.equal(manager.routeSpecifier.value.configSource?.configSourceSpecifier.case, "ads");
    assert.equal(manager.routeSpecifier.value.configSource?.initialFetchTimeout?.seconds, 0n);
  });

  it("pathNormalization NONE turns path normalization off; DECODE_AND_MERGE_SLASHES merges and unescapes", () => {
    assert.equal(build({}, { pathNormalization: { normalization: "NONE" } }).normalizePath, false);
    const decode = build({}, { pathNormalization: { normalization: "DECODE_AND_MERGE_SLASHES" } });
    assert.equal(decode.mergeSlashes, true);
    assert.equal(
      decode.pathWithEscapedSlashesAction,
      hcm.HttpConnectionManager_PathWithEscapedSlashesAction.UNESCAPE_AND_FORWARD,
    );
  });

  it("inbound forwards client cert details (APPEND_FORWARD) and names itself istio-envoy; gRPC ports speak HTTP/2", () => {
    const inbound = build({ listenerClass: "sidecarInbound", protocol: "GRPC" });
    assert.equal(inbound.forwardClientCertDetails, hcm.HttpConnectionManager_ForwardClientCertDetails.APPEND_FORWARD);
    assert.equal(inbound.serverName, "istio-envoy");
    assert.ok(inbound.http2ProtocolOptions);
    assert.equal(inbound.useRemoteAddress, false);
  });

  it("the request id is a UUID extension used for trace sampling; websocket upgrades allowed", () => {
    const manager = build();
    const config = unpackAny(manager.requestIdExtension!.typedConfig!, uuidRequestId.UuidRequestIdConfigSchema);
    assert.equal(config?.useRequestIdForTraceSampling, true);
    assert.deepEqual(
      manager.upgradeConfigs.map((u) => u.upgradeType),
      ["websocket"],
    );
  });

  it("tracing follows enableTracing, with defaultConfig.tracing.sampling as the random sampling", () => {
    assert.equal(build({}, { enableTracing: false }).tracing, undefined);
    assert.equal(build({}, { defaultConfig: { tracing: { sampling: 25 } } }).tracing?.randomSampling?.value, 25);
  });

  it("node IDLE_TIMEOUT sets the connection idle timeout", () => {
    assert.equal(build({}, {}, { IDLE_TIMEOUT: "90s" }).commonHttpProtocolOptions?.idleTimeout?.seconds, 90n);
  });

  it("node HTTP10 lets outbound and gateway connection managers accept HTTP/1.0", () => {
    assert.equal(build({}, {}, { HTTP10: "1" }).httpProtocolOptions?.acceptHttp10, true);
    assert.equal(build({ listenerClass: "sidecarInbound" }, {}, { HTTP10: "1" }).httpProtocolOptions, undefined);
  });

  it("managers of one build sharing a filter list pack to the bytes of the whole manager", () => {
    const env = {
      proxy: proxyFrom({ metadata: { IDLE_TIMEOUT: "90s" } }),
      mesh: meshFrom({ accessLogFile: "/dev/stdout" }),
    };
    for (const listenerClass of ["sidecarOutbound", "gateway"] as const) {
      const httpFilters = buildHttpFilters({ listenerClass });
      const managers: HcmOptions[] = [
        {
          listenerClass,
          statPrefix: "outbound_10.0.0.1_9090;",
          routes: { rds: "a.default.svc.cluster.local:9090" },
          httpFilters,
        },
        { listenerClass, statPrefix: "", routes: { rds: "9090" }, httpFilters },
        { listenerClass, statPrefix: "outbound_10.0.0.2_9090;", routes: { rds: "" }, httpFilters, protocol: "HTTP2" },
        {
          listenerClass,
          statPrefix: "outbound_10.0.0.3_9090;",
          routes: { rds: "b:9090" },
          httpFilters,
          protocol: "HTTP2",
        },
      ];
      for (const options of managers) {
        const config = buildHcmFilter(env, options).configType;
        assert.ok(config.case === "typedConfig");
        const whole = packAny(hcm.HttpConnectionManagerSchema, buildHttpConnectionManager(env, options));
        assert.deepEqual(config.value, whole, `${listenerClass} ${options.statPrefix}`);
      }
    }
  });
});
