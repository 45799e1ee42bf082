import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { pino } from "pino";
import { NO_OUTPUT_LEVELS, parseOutputLevels, scopedLogger, scopeLevel } from "./output-level.ts";

test("scoped levels: each scope its own, a bare level the default scope's, the last one given wins", () => {
  const levels = parseOutputLevels("info,ads:debug,model:none,ads:warn");
  assert.equal(scopeLevel(levels, "default", "error"), "info");
  assert.equal(scopeLevel(levels, "ads", "error"), "warn");
  assert.equal(scopeLevel(levels, "model", "error"), "none");
});

test("a scope not named takes the default scope's level, else the program's", () => {
  assert.equal(scopeLevel(parseOutputLevels("default:debug"), "kube", "warn"), "debug");
  assert.equal(scopeLevel(parseOutputLevels("ads:debug"), "kube", "warn"), "warn");
  assert.equal(scopeLevel(NO_OUTPUT_LEVELS, "kube", "warn"), "warn");
});

test("the `all` scope overrides every scope, named before or after it", () => {
  const levels = parseOutputLevels("ads:debug,all:error,model:info");
  assert.equal(scopeLevel(levels, "ads", "warn"), "error");
  assert.equal(scopeLevel(levels, "model", "warn"), "error");
  assert.equal(scopeLevel(levels, "default", "warn"), "error");
});

test("invalid values name the flag and the entry", () => {
  assert.throws(
    () => parseOutputLevels("default:info,ads:verbose"),
    new Error(
      '--log_output_level: invalid level "verbose" in "ads:verbose"; levels are none, fatal, error, warn, info, debug',
    ),
  );
  assert.throws(
    () => parseOutputLevels("a:b:debug"),
    new Error('--log_output_level: "a:b:debug" is not <scope>:<level> or <level>'),
  );
  assert.throws(() => parseOutputLevels(":debug"), /":debug" is not <scope>:<level>/);
  assert.throws(() => parseOutputLevels(""), /invalid level "" in ""/);
  assert.throws(() => parseOutputLevels("info,"), /invalid level "" in ""/);
});

test("a scoped logger logs below its root's level when its scope asks, and nothing at none", () => {
  const lines: { level: number; scope: string; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")));
      done();
    },
  });
  const root = pino({ level: "info" }, sink);
  const levels = parseOutputLevels("ads:debug,model:none");
  scopedLogger(root, levels, "ads", "info").debug("pushed");
  scopedLogger(root, levels, "model", "info").error("hidden");
  scopedLogger(root, levels, "kube", "info").debug("hidden too");
  assert.deepEqual(
    lines.map((l) => [l.level, l.scope, l.msg]),
    [[20, "ads", "pushed"]],
  );
});
