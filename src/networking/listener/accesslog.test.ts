import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { meshFrom, proxyFrom } from "../../../test/support/listeners.ts";
import { accesslog, fileAccessLog, unpackAny } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { buildProxyTelemetry } from "../telemetry/index.ts";
import { DEFAULT_JSON_FORMAT, DEFAULT_TEXT_FORMAT } from "./accesslog.ts";
import { buildAccessLogs, buildListenerAccessLogs } from "./index.ts";
import type { ListenerEnv } from "./types.ts";

const env = (mesh: MeshConfig): ListenerEnv => ({ proxy: proxyFrom(), mesh });

function fileConfig(log: accesslog.AccessLog | undefined): fileAccessLog.FileAccessLog | undefined {
  return log?.configType.case === "typedConfig"
    ? unpackAny(log.configType.value, fileAccessLog.FileAccessLogSchema)
    : undefined;
}

describe("access logs from MeshConfig (FileAccessLogFromMeshConfig)", () => {
  it("no accessLogFile: no access log", () => {
    assert.deepEqual(buildAccessLogs(meshFrom()), []);
    assert.deepEqual(buildListenerAccessLogs(env(meshFrom()), "sidecarOutbound"), []);
  });

  it("TEXT without a format uses Istio's default format", () => {
    const [log] = buildAccessLogs(meshFrom({ accessLogFile: "/dev/stdout" }));
    assert.deepEqual(envoyViolations(accesslog.AccessLogSchema, log), []);
    assert.equal(log.name, "envoy.access_loggers.file");
    const config = fileConfig(log);
    assert.equal(config?.path, "/dev/stdout");
    const format = config?.accessLogFormat.case === "logFormat" ? config.accessLogFormat.value.format : undefined;
    assert.deepEqual(format?.case === "textFormatSource" && format.value.specifier, {
      case: "inlineString",
      value: DEFAULT_TEXT_FORMAT,
    });
  });

  it("a user TEXT format gets the trailing newline Istio adds", () => {
    const config = fileConfig(buildAccessLogs(meshFrom({ accessLogFile: "/tmp/a", accessLogFormat: "%PROTOCOL%" }))[0]);
    const format = config?.accessLogFormat.case === "logFormat" ? config.accessLogFormat.value.format : undefined;
    assert.equal(format?.case === "textFormatSource" && format.value.specifier.value, "%PROTOCOL%\n");
  });

  it("JSON with a format that does not parse falls back to the default labels", () => {
    const config = fileConfig(
      buildAccessLogs(
        meshFrom({ accessLogFile: "/dev/stdout", accessLogEncoding: "JSON", accessLogFormat: "{oops" }),
      )[0],
    );
    const format = config?.accessLogFormat.case === "logFormat" ? config.accessLogFormat.value.format : undefined;
    assert.deepEqual(format?.case === "jsonFormat" && format.value, DEFAULT_JSON_FORMAT);
  });

  it("the listener access log records only connections no chain matched (response flag NR)", () => {
    const [log] = buildListenerAccessLogs(env(meshFrom({ accessLogFile: "/dev/stdout" })), "sidecarInbound");
    assert.deepEqual(
      log.filter?.filterSpecifier.case === "responseFlagFilter" && log.filter.filterSpecifier.value.flags,
      ["NR"],
    );
    assert.deepEqual(
      buildListenerAccessLogs(
        env(meshFrom({ accessLogFile: "/dev/stdout", disableEnvoyListenerLog: true })),
        "gateway",
      ),
      [],
    );
  });

  it("Telemetry logs replace the mesh's on listeners, their filter and'ed with NR", () => {
    const mesh = meshFrom({
      accessLogFile: "/dev/stdout",
      extensionProviders: [{ name: "json", envoyFileAccessLog: { path: "/var/log/a", logFormat: { labels: {} } } }],
    });
    const proxy = proxyFrom();
    const telemetry = buildProxyTelemetry({
      mesh,
      proxy,
      rootNamespace: "istio-system",
      services: [],
      telemetries: [
        {
          apiVersion: "telemetry.istio.io/v1",
          kind: "Telemetry",
          metadata: { name: "default", namespace: "istio-system" },
          spec: { accessLogging: [{ providers: [{ name: "json" }], filter: { expression: "response.code >= 400" } }] },
        },
      ],
    });
    const [log, ...rest] = buildListenerAccessLogs({ proxy, mesh, telemetry }, "sidecarOutbound");
    assert.deepEqual(rest, []);
    assert.deepEqual(envoyViolations(accesslog.AccessLogSchema, log), []);
    assert.equal(fileConfig(log)?.path, "/var/log/a");
    const and = log.filter?.filterSpecifier.case === "andFilter" ? log.filter.filterSpecifier.value.filters : [];
    assert.deepEqual(
      and.map((f) => f.filterSpecifier.case),
      ["responseFlagFilter", "extensionFilter"],
    );
  });
});
