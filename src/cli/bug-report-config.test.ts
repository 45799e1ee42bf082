// bug-report's -f file (istioctl's BugReportConfig in YAML) and how its fields combine with the flags.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  BUG_REPORT_DEFAULTS,
  globListError,
  mergeBugReportSettings,
  parseBugReportConfig,
  readBugReportConfig,
} from "./bug-report-config.ts";

const FILE = `
istioNamespace: istio-x
fullSecrets: true
proxyAdminPort: 15001
commandTimeout: 5m
include: [shop/*/*, "istio-x"]
exclude: [other]
since: 1h
criticalErrors: ["*x509*"]
ignoredErrors: ["*deprecated*", "*retry*"]
requestConcurrency: 4
tailLines: 100
skipAnalyze: true
timeFilterApplied: true
`;

test("the file's fields become the settings they name; istioctl's JSON names, in any case", () => {
  assert.deepEqual(parseBugReportConfig(FILE, "br.yaml"), {
    istioNamespace: "istio-x",
    fullSecrets: true,
    proxyAdminPort: 15001,
    timeout: "5m",
    include: ["shop/*/*", "istio-x"],
    exclude: ["other"],
    duration: "1h",
    criticalErrors: ["*x509*"],
    ignoredErrors: ["*deprecated*", "*retry*"],
    concurrency: 4,
    tail: 100,
    skipAnalyze: true,
  });
  // Go's encoding/json matches names regardless of case; a duration may be nanoseconds.
  assert.deepEqual(parseBugReportConfig("KubeConfigPath: /k\ncommandtimeout: 2000000000\n", "f"), {
    kubeconfig: "/k",
    timeout: "2000000000ns",
  });
  assert.deepEqual(parseBugReportConfig("", "f"), {});
  assert.deepEqual(parseBugReportConfig("include: null\n", "f"), {}, "null unsets, as in a merge patch");
});

test("a bad file is an error naming the file and the field", () => {
  const bad = (text: string, message: RegExp) => assert.throws(() => parseBugReportConfig(text, "br.yaml"), message);
  bad("include: [a\n", /^Error: br\.yaml: not valid YAML: /);
  bad("- a\n", /^Error: br\.yaml: must be a mapping of bug-report config fields \(kubeConfigPath, /);
  bad("includes: [a]\n", /^Error: br\.yaml: unknown field "includes"; the fields are kubeConfigPath, .*, include, /);
  bad("include: a\n", /^Error: br\.yaml: field include: must be a list of strings, not "a"/);
  bad("include: [5]\n", /field include: must be a list of strings, not \[5\]/);
  bad("include: [ok, ns//pod/app]\n", /^Error: br\.yaml: field include\[1\]: bad label\/annotation selection app/);
  bad("fullSecrets: yes please\n", /^Error: br\.yaml: field fullSecrets: must be true or false, not "yes please"/);
  bad("tailLines: -1\n", /field tailLines: must be a whole number, not -1/);
  bad("proxyAdminPort: '15000'\n", /field proxyAdminPort: must be a whole number, not "15000"/);
  bad(
    "commandTimeout: 5 minutes\n",
    /^Error: br\.yaml: field commandTimeout: time: unknown unit " minutes" in duration "5 minutes"/,
  );
  bad("since: [1h]\n", /field since: must be a duration/);
  bad(
    "startTime: yesterday\n",
    /field startTime: must be an RFC 3339 time such as 2006-01-02T15:04:05Z, not "yesterday"/,
  );
  bad(
    "ignoredErrors: ['*ok*', '[x']\n",
    /^Error: br\.yaml: field ignoredErrors\[1\]: bad glob pattern "\[x": the character class/,
  );
  bad("criticalErrors: ['a\\']\n", /field criticalErrors\[0\]: bad glob pattern "a\\\\": it ends in an unescaped/);
});

test("an unreadable file is an error naming it", () => {
  const dir = mkdtempSync(join(tmpdir(), "br-config-"));
  try {
    const path = join(dir, "br.yaml");
    assert.throws(
      () => readBugReportConfig(path),
      (err: Error) =>
        err.message.startsWith(`cannot read the bug-report config file ${path}: `) && /ENOENT/.test(err.message),
    );
    writeFileSync(path, "tailLines: 7\n");
    assert.deepEqual(readBugReportConfig(path), { tail: 7 });
    assert.throws(() => readBugReportConfig(dir), /cannot read the bug-report config file .*EISDIR/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the flags given override the file, the file the defaults; lists are replaced whole", () => {
  const file = parseBugReportConfig(FILE, "br.yaml");
  const none = mergeBugReportSettings({}, {});
  assert.deepEqual(none, BUG_REPORT_DEFAULTS);
  const fromFile = mergeBugReportSettings({ include: undefined, fullSecrets: undefined }, file);
  assert.deepEqual(fromFile.include, ["shop/*/*", "istio-x"]);
  assert.equal(fromFile.fullSecrets, true);
  assert.equal(fromFile.timeout, "5m");
  assert.equal(fromFile.tail, 100);
  assert.equal(fromFile.skipNetstat, false, "a field the file does not set keeps its default");
  assert.equal(fromFile.duration, "1h");

  const flags = mergeBugReportSettings(
    { include: ["bookinfo"], fullSecrets: false, ignoredErrors: ["*eof*"], tail: 0, exclude: [] },
    file,
  );
  assert.deepEqual(flags.include, ["bookinfo"], "a list flag replaces the file's list, not appended to it");
  assert.deepEqual(flags.ignoredErrors, ["*eof*"]);
  assert.deepEqual(flags.exclude, []);
  assert.equal(flags.fullSecrets, false, "a flag given as false overrides the file's true");
  assert.equal(flags.tail, 0);
  assert.deepEqual(flags.criticalErrors, ["*x509*"], "what the flags leave alone is the file's");
  assert.equal(flags.istioNamespace, "istio-x");
});

test("the log time range is one setting: a time flag replaces all of the file's", () => {
  const file = parseBugReportConfig("startTime: 2024-01-01T00:00:00Z\nendTime: 2024-01-02T00:00:00Z\n", "f");
  const fromFile = mergeBugReportSettings({}, file);
  assert.equal(fromFile.startTime, "2024-01-01T00:00:00Z");
  assert.equal(fromFile.endTime, "2024-01-02T00:00:00Z");
  const withFlag = mergeBugReportSettings({ duration: "10m" }, file);
  assert.equal(withFlag.duration, "10m");
  assert.equal(withFlag.startTime, undefined, "not --duration with the file's startTime (which would conflict)");
  assert.equal(withFlag.endTime, undefined);
});

test("--critical-errs and --ignore-errs: a bad glob names the flag and the pattern", () => {
  assert.equal(globListError("--ignore-errs", ["*ok*", "a[b-c]d", "\\*"]), undefined);
  assert.match(globListError("--ignore-errs", ["[a-"]) ?? "", /^--ignore-errs: bad glob pattern "\[a-": the range/);
  assert.match(
    globListError("--critical-errs", ["ok", "x[]"]) ?? "",
    /^--critical-errs\[1\]: bad glob pattern "x\[\]"/,
  );
});
