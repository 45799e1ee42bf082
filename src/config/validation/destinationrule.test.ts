import assert from "node:assert/strict";
import { test } from "node:test";
import { corpusDocuments, messages, runOnDocument, runSemantic } from "../../../test/support/validation.ts";
import { validateDestinationRule } from "./destinationrule.ts";

const check = (spec: unknown) => runSemantic(validateDestinationRule, spec, { kind: "DestinationRule" });

test("DestinationRule: host is a wildcard domain (short names ok, IPs not)", () => {
  assert.deepEqual(check({ host: "reviews" }).errors, []);
  assert.deepEqual(check({ host: "*" }).errors, []);
  assert.deepEqual(check({ host: "10.0.0.1" }).errors, [
    { path: "spec.host", message: 'domain name "0.0.1" invalid (top level domain "1" cannot be all-numeric)' },
  ]);
  assert.deepEqual(check({}).errors, [{ path: "spec.host", message: "empty domain name not allowed" }]);
});

test("DestinationRule: subset names must be unique and valid", () => {
  const r = check({ host: "r", subsets: [{ name: "v1" }, { name: "v1" }, null, { name: "" }] });
  assert.deepEqual(r.errors, [
    { path: "spec.subsets[1].name", message: "duplicate subset names: v1" },
    { path: "spec.subsets[2]", message: "subset may not be null" },
    { path: "spec.subsets[3].name", message: "subset name cannot be empty" },
  ]);
});

test("DestinationRule: subset labels and traffic policy are validated", () => {
  const r = check({ host: "r", subsets: [{ name: "v1", labels: { "bad key": "v" }, trafficPolicy: {} }] });
  assert.deepEqual(r.errors, [
    { path: "spec.subsets[0].labels", message: 'invalid tag key: "bad key"' },
    { path: "spec.subsets[0].trafficPolicy", message: "traffic policy must have at least one field" },
  ]);
});

test("DestinationRule: a subset's traffic policy has errors but no warnings, as Istio's appendErrors keeps", () => {
  const loadBalancer = { consistentHash: { httpHeaderName: "x", minimumRingSize: 42 } };
  const top = check({ host: "r", trafficPolicy: { loadBalancer } });
  assert.deepEqual(messages(top.warnings), [
    "consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash configuration instead",
  ]);
  const subset = check({
    host: "r",
    subsets: [
      {
        name: "v1",
        trafficPolicy: { loadBalancer: { consistentHash: { ...loadBalancer.consistentHash, maglev: {} } } },
      },
    ],
  });
  assert.deepEqual(subset.warnings, []);
  assert.deepEqual(messages(subset.errors), [
    "only one of MinimumRingSize or Maglev/Ringhash can be specified",
    "tableSize must be set for maglev",
    "tableSize must be a prime number for maglev",
  ]);
});

test("DestinationRule: traffic policy errors carry their path", () => {
  const r = check({ host: "r", trafficPolicy: { connectionPool: { tcp: { connectTimeout: "1x" } } } });
  assert.deepEqual(r.errors, [
    {
      path: "spec.trafficPolicy.connectionPool.tcp.connectTimeout",
      message: 'bad Duration: time: unknown unit "x" in duration "1x"',
    },
  ]);
});

test("DestinationRule: with a workload selector, exportTo stays in the namespace", () => {
  const r = check({ host: "r", workloadSelector: { matchLabels: { app: "a" } }, exportTo: ["other"] });
  assert.deepEqual(messages(r.errors), [
    "destination rule with workload selector cannot have exportTo beyond current namespace",
  ]);
  assert.deepEqual(check({ host: "r", workloadSelector: { matchLabels: { app: "a" } }, exportTo: ["."] }).errors, []);
});

test("DestinationRule: workload selector labels and empty-selector warning", () => {
  const r = check({ host: "r", workloadSelector: {} });
  assert.deepEqual(messages(r.warnings), ["workload selector specified without labels"]);
  assert.deepEqual(messages(check({ host: "r", workloadSelector: { matchLabels: { a: "*" } } }).errors), [
    'wildcard is not supported in selector: "a=*"',
  ]);
});

test("DestinationRule: Istio's valid corpus passes", () => {
  for (const doc of corpusDocuments("destinationrule-valid.yaml")) {
    assert.deepEqual(runOnDocument(validateDestinationRule, doc).errors, [], doc.metadata.name);
  }
});

test("DestinationRule: the webhook rejects all 3 documents of Istio's invalid corpus", () => {
  const docs = corpusDocuments("destinationrule-invalid.yaml");
  assert.equal(docs.length, 3);
  for (const doc of docs)
    assert.notDeepEqual(runOnDocument(validateDestinationRule, doc).errors, [], doc.metadata.name);
});
