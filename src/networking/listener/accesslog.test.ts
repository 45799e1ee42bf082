import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { accesslog, fileAccessLog, unpackAny } from "../../api/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { DEFAULT_JSON_FORMAT, DEFAULT_TEXT_FORMAT } from "./accesslog.ts";
import { buildAccessLogs, buildListenerAccessLogs } from "./index.ts";
import { meshFrom } from "./testing.ts";

function fileConfig(log: accesslog.AccessLog | undefined): fileAccessLog.FileAccessLog | undefined {
  return log?.configType.case === "typedConfig"
    ? unpackAny(log.configType.value, fileAccessLog.FileAccessLogSchema)
    : undefined;
}

describe("access logs from MeshConfig (FileAccessLogFromMeshConfig)", () => {
  it("no accessLogFile: no access log", () => {
    assert.deepEqual(buildAccessLogs(meshFrom()), []);
    assert.deepEqual(buildListenerAccessLogs(meshFrom()), []);
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
    const [log] = buildListenerAccessLogs(meshFrom({ accessLogFile: "/dev/stdout" }));
    assert.deepEqual(
      log.filter?.filterSpecifier.case === "responseFlagFilter" && log.filter.filterSpecifier.value.flags,
      ["NR"],
    );
    assert.deepEqual(
      buildListenerAccessLogs(meshFrom({ accessLogFile: "/dev/stdout", disableEnvoyListenerLog: true })),
      [],
    );
  });
});
