// bug-report's --include/--exclude specs, namespaces and log time range, as istioctl reads them.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type ContainerPath,
  filterLogLines,
  globMatches,
  globSyntaxError,
  logImportance,
  logStats,
  logsByPriority,
  parseLogLine,
  parseSelectionSpec,
  Selection,
} from "./bug-report-select.ts";

const path = (over: Partial<ContainerPath>): ContainerPath => ({
  namespace: "shop",
  deployment: "productpage-v1",
  pod: "productpage-v1-abc",
  container: "istio-proxy",
  labels: { app: "productpage", version: "v1" },
  annotations: {},
  ...over,
});

test("a spec's parts, in istioctl's order; '*' and empty parts match everything", () => {
  assert.deepEqual(parseSelectionSpec("ns1,ns2/dep1//app=p*,v=1/a=b/istio-proxy"), {
    namespaces: ["ns1", "ns2"],
    deployments: ["dep1"],
    pods: [],
    labels: { app: "p*", v: "1" },
    annotations: { a: "b" },
    containers: ["istio-proxy"],
  });
  assert.deepEqual(parseSelectionSpec("*").namespaces, []);
  assert.throws(
    () => parseSelectionSpec("ns//pod/app"),
    /bad label\/annotation selection app, must have format key=value/,
  );
  assert.throws(() => parseSelectionSpec("ns///a*=b"), /key cannot have '\*' wildcards/);
});

test("globs as Go's filepath.Match", () => {
  assert.ok(globMatches("shop*", "shop-1"));
  assert.ok(!globMatches("shop", "shop-1"));
  assert.ok(globMatches("p?d", "pod"));
  assert.ok(globMatches("v[0-9]", "v1"));
  assert.ok(!globMatches("v[^0-9]", "v1"));
  assert.ok(globMatches("a.b", "a.b") && !globMatches("a.b", "axb"));
  // Escapes in a class, as Go reads them: [\]] is ']', [a\-c] is 'a', '-' or 'c'.
  assert.ok(globMatches("x[\\]]", "x]") && !globMatches("x[\\]]", "x\\"));
  assert.ok(globMatches("[a\\-c]", "-") && !globMatches("[a\\-c]", "b"));
  assert.ok(!globMatches("[z-a]", "m"), "a reversed range matches nothing");
  assert.ok(globMatches("[^z-a]", "m"));
  assert.ok(!globMatches("a[", "a["), "a bad pattern matches nothing");
});

test("a container is collected when it matches an include spec and no exclude spec", () => {
  const all = new Selection([], []);
  assert.ok(all.selects(path({})));
  assert.ok(!all.selects(path({ namespace: "kube-system" })), "the ignored namespaces are always left out");
  const some = new Selection(["shop,bank/product*/*/app=product*"], ["*//*-abc"]);
  assert.ok(!some.selects(path({})), "excluded by pod name");
  assert.ok(some.selects(path({ pod: "productpage-v1-def" })));
  assert.ok(!some.selects(path({ pod: "productpage-v1-def", labels: { app: "ratings" } })));
  assert.ok(!some.selects(path({ pod: "productpage-v1-def", namespace: "other" })));
  // Naming an ignored namespace in --exclude changes nothing; the rest of the spec stays.
  assert.deepEqual(new Selection([], ["kube-system,shop"]).exclude[0].namespaces, ["shop"]);
  assert.equal(new Selection([], ["kube-system"]).exclude.length, 0);
});

test("the namespaces whose resources are dumped", () => {
  const some = new Selection(["shop,bank", "shop/reviews"], ["bank"]);
  assert.deepEqual(some.listedNamespaces("istio-system"), ["bank", "istio-system", "shop"]);
  assert.ok(some.keepsNamespace("shop", "istio-system"));
  assert.ok(some.keepsNamespace("istio-system", "istio-system"), "the Istio namespace is always kept");
  assert.ok(!some.keepsNamespace("bank", "istio-system"), "excluded by a spec naming namespaces alone");
  assert.ok(!some.keepsNamespace("other", "istio-system"));
  // A glob, or a spec without namespaces, lists every namespace.
  assert.deepEqual(new Selection(["sh*"], []).listedNamespaces("istio-system"), [""]);
  assert.deepEqual(new Selection(["/reviews"], []).listedNamespaces("istio-system"), [""]);
  // A spec excluding more than namespaces leaves the namespace's resources in.
  assert.ok(new Selection([], ["bank/dep"]).keepsNamespace("bank", "istio-system"));
});

test("log lines in the time range, continuation lines with theirs", () => {
  const log = [
    "2026-01-01T10:00:00.000000Z\tinfo\told",
    "2026-01-01T11:00:00Z\terror\tin range",
    "\tat a stack frame",
    "2026-01-01T13:00:00+01:00\tinfo\tlate (12:00Z)",
    "\tits continuation",
  ].join("\n");
  assert.equal(
    filterLogLines(log, new Date("2026-01-01T10:30:00Z"), new Date("2026-01-01T11:30:00Z")),
    "2026-01-01T11:00:00Z\terror\tin range\n\tat a stack frame",
  );
  assert.equal(filterLogLines(log, undefined, undefined), log);
});

test("log lines as istioctl's processlog reads them: Istio's tab-separated, JSON and ztunnel's", () => {
  assert.deepEqual(parseLogLine("2024-05-01T10:00:00.123456Z\terror\tads\tpush failed: eof"), {
    level: "error",
    text: "ads\tpush failed: eof",
  });
  assert.deepEqual(parseLogLine('{"time":"2024-05-01T10:00:00Z","level":"warn","msg":"slow","scope":"xds"}'), {
    level: "warn",
    text: "slow",
  });
  assert.deepEqual(parseLogLine("2024-05-01T10:00:00.5Z  error xds::client  connection refused"), {
    level: "error",
    text: "xds::client\t  connection refused",
  });
  assert.equal(parseLogLine("\tat main.go:12"), undefined, "a stack trace line");
  assert.equal(parseLogLine("yesterday\terror\tads\tx"), undefined, "no RFC 3339 time");
  assert.equal(parseLogLine("2024-05-01T10:00:00Z\tloud\tads\tx"), undefined, "no known level");
  assert.equal(parseLogLine('{"time":"2024-05-01T10:00:00Z","level":"error","msg":""}'), undefined, "no message");
  assert.equal(parseLogLine("{not json"), undefined);
});

const LOG = [
  "2024-05-01T10:00:00Z\tinfo\tads\tpushed",
  "2024-05-01T10:00:01Z\twarn\tads\tdeprecated field",
  "2024-05-01T10:00:02Z\terror\tads\tx509: certificate expired",
  "2024-05-01T10:00:03Z\terror\tads\tconnection reset",
  "\tgoroutine 1 [running]:",
  "2024-05-01T10:00:04Z\tfatal\tads\tout of memory",
].join("\n");

test("a log's importance: 1000 per fatal, 100 per error, 10 per warning; --ignore-errs matches not counted", () => {
  const all = logStats(LOG, [], []);
  assert.deepEqual(all, { fatals: 1, errors: 2, warnings: 1, critical: false });
  assert.equal(logImportance(all), 1210);
  // The text matched is what follows the level: the scope, a tab, the message.
  const ignored = logStats(LOG, [], ["*reset", "ads\tdeprecated*"]);
  assert.deepEqual(ignored, { fatals: 1, errors: 1, warnings: 0, critical: false });
  assert.equal(logImportance(ignored), 1100);
  assert.deepEqual(logStats(LOG, [], ["*"]), { fatals: 0, errors: 0, warnings: 0, critical: false });
});

test("a --critical-errs match in an error or fatal line makes the log critical; not in a warning, nor when ignored", () => {
  assert.equal(logStats(LOG, ["*x509*"], []).critical, true);
  assert.equal(logStats(LOG, ["*memory"], []).critical, true, "a fatal line");
  assert.equal(logStats(LOG, ["*deprecated*"], []).critical, false, "a warning is not an error");
  assert.equal(logStats(LOG, ["*x509*"], ["*x509*"]).critical, false);
  assert.equal(logStats(LOG, ["*nothing*"], []).critical, false);
  // As Go's filepath.Match: '*' does not match '/'.
  assert.equal(logStats("2024-05-01T10:00:00Z\terror\tads\tGET /a/b failed", ["*failed"], []).critical, false);
  assert.equal(logStats("2024-05-01T10:00:00Z\terror\tads\tGET /a/b failed", ["*/*/* failed"], []).critical, true);
});

test("logs by priority: critical first, then by importance, then by path", () => {
  const stats = new Map([
    ["a.log", { fatals: 0, errors: 1, warnings: 0, critical: false }],
    ["b.log", { fatals: 0, errors: 0, warnings: 1, critical: true }],
    ["c.log", { fatals: 1, errors: 0, warnings: 0, critical: false }],
    ["d.log", { fatals: 0, errors: 1, warnings: 0, critical: false }],
  ]);
  assert.deepEqual(logsByPriority(stats), [
    "b.log: critical, 0 fatal, 0 errors, 1 warnings (importance 10)",
    "c.log: 1 fatal, 0 errors, 0 warnings (importance 1000)",
    "a.log: 0 fatal, 1 errors, 0 warnings (importance 100)",
    "d.log: 0 fatal, 1 errors, 0 warnings (importance 100)",
  ]);
});

test("glob syntax as Go's filepath.Match checks it", () => {
  for (const ok of ["*", "a?b", "[abc]", "[^a-z]x", "[\\]]", "\\*"]) assert.equal(globSyntaxError(ok), undefined, ok);
  for (const bad of ["[", "[]", "[abc", "[^]", "[-a]", "a\\", "[a-"]) assert.ok(globSyntaxError(bad), bad);
});
