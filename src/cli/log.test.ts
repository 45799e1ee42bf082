import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { afterEach, test } from "node:test";
import { cliLog, configureCliLog } from "./log.ts";

/** A destination that keeps each JSON line. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")));
      done();
    },
  });
  return { lines, sink };
}

afterEach(() => configureCliLog(undefined));

test("by default the CLI logs warnings and errors only", () => {
  const { lines, sink } = capture();
  configureCliLog(undefined, sink);
  cliLog("default").debug("read");
  cliLog("kube").info("listed");
  cliLog("xds").warn("slow");
  assert.deepEqual(
    lines.map((l) => [l.level, l.scope, l.msg]),
    [["warn", "xds", "slow"]],
  );
});

test("--log_output_level sets each scope's level; lines carry level names and ISO times", () => {
  const { lines, sink } = capture();
  configureCliLog("kube:debug,default:error", sink);
  cliLog("kube").debug({ kind: "Pod" }, "listed");
  cliLog("default").warn("hidden");
  cliLog("http").warn("hidden too");
  assert.equal(lines.length, 1);
  assert.equal(lines[0].level, "debug");
  assert.equal(lines[0].scope, "kube");
  assert.equal(lines[0].kind, "Pod");
  assert.match(String(lines[0].time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test("an invalid value throws and leaves the levels as they were", () => {
  const { lines, sink } = capture();
  configureCliLog("debug", sink);
  assert.throws(() => configureCliLog("default:loud"), /--log_output_level: invalid level "loud"/);
  cliLog("default").debug("still debug");
  assert.deepEqual(
    lines.map((l) => l.msg),
    ["still debug"],
  );
});
