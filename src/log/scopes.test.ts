import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { parseOutputLevels } from "./output-level.ts";
import { LogScopes } from "./scopes.ts";

function sink() {
  const lines: { level: number; scope?: string; msg: string; stack?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")));
      done();
    },
  });
  return { lines, stream };
}

test("scopes are listed before they log, and a level set at run time reaches their loggers", () => {
  const { lines, stream } = sink();
  const scopes = new LogScopes(
    "test",
    parseOutputLevels("ads:warn"),
    "info",
    { ads: "xDS", kube: "Kubernetes" },
    stream,
  );
  assert.deepEqual(
    scopes.list().map((s) => [s.name, s.output_level, s.description]),
    [
      ["ads", "warn", "xDS"],
      ["default", "info", ""],
      ["kube", "info", "Kubernetes"],
    ],
  );
  const ads = scopes.logger("ads");
  ads.info("hidden");
  assert.equal(scopes.update("ads", { output_level: "debug" }), true);
  ads.debug("shown");
  // A logger made after the change starts at the changed level.
  scopes.logger("ads").debug("shown too");
  assert.equal(scopes.update("nosuch", { output_level: "debug" }), false);
  assert.equal(scopes.update("ads", { output_level: "verbose" }), true);
  assert.equal(scopes.info("ads")?.output_level, "debug");
  assert.deepEqual(
    lines.map((l) => [l.scope, l.msg]),
    [
      ["ads", "shown"],
      ["ads", "shown too"],
    ],
  );
});

test("a line at or above its scope's stack trace level carries the stack", () => {
  const { lines, stream } = sink();
  const scopes = new LogScopes("test", parseOutputLevels("info"), "info", { kube: "" }, stream);
  const kube = scopes.logger("kube");
  kube.error("no stack");
  scopes.update("kube", { stack_trace_level: "warn" });
  kube.info("below");
  kube.warn("at");
  scopes.root.error("other scope");
  assert.deepEqual(
    lines.map((l) => [l.msg, l.stack !== undefined]),
    [
      ["no stack", false],
      ["below", false],
      ["at", true],
      ["other scope", false],
    ],
  );
  assert.match(lines[2].stack ?? "", /scopes\.test\.ts/);
});
