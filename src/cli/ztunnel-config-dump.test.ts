import assert from "node:assert/strict";
import { test } from "node:test";
import { parseGoDuration } from "./waypoint-run.ts";
import { jsonToYaml, marshalIndent, parseZtunnelDump, WORKLOAD } from "./ztunnel-config-dump.ts";

test("a workload is written back as istioctl's Go struct: struct order, zero values, unknown fields dropped", () => {
  const dump = parseZtunnelDump('{"Workloads":[{"NAME":"a","workloadips":["10.0.0.1"],"extra":1,"locality":null}]}');
  const json = JSON.parse(marshalIndent(dump.workloads, WORKLOAD)) as Record<string, unknown>[];
  assert.deepEqual(Object.keys(json[0]).slice(0, 5), ["uid", "workloadIps", "protocol", "name", "namespace"]);
  assert.equal(json[0].name, "a");
  assert.deepEqual(json[0].locality, {});
  assert.deepEqual(json[0].applicationTunnel, { protocol: "" });
  assert.equal("extra" in json[0], false);
});

test("a type mismatch is reported in encoding/json's words, naming the struct and field path", () => {
  assert.throws(
    () => parseZtunnelDump('{"services":[{"endpoints":{"x":{"port":{"80":"eighty"}}}}]}'),
    /^Error: json: cannot unmarshal string into Go struct field ZtunnelEndpoint\.endpoints\.port of type uint16$/,
  );
});

test("YAML as go-yaml: digit runs ordered as numbers, empty strings double-quoted, long lines folded past 80", () => {
  const long = `${"word ".repeat(20)}end`;
  assert.equal(
    jsonToYaml(JSON.stringify({ ports: { "9080": 1, "15008": 2 }, e: "", s: long })),
    `e: ""\nports:\n  "9080": 1\n  "15008": 2\ns: ${"word ".repeat(15)}word\n  ${"word ".repeat(4)}end\n`,
  );
});

test("Go durations: units summed, anything else refused with Go's words", () => {
  assert.equal(parseGoDuration("1m30s"), 90_000);
  assert.equal(parseGoDuration("1.5s"), 1500);
  assert.throws(() => parseGoDuration("90"), /time: invalid duration "90"/);
});
