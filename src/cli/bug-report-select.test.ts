// bug-report's --include/--exclude specs, namespaces and log time range, as istioctl reads them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ContainerPath, filterLogLines, globMatches, parseSelectionSpec, Selection } from "./bug-report-select.ts";

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
