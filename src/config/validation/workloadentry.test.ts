import assert from "node:assert/strict";
import { test } from "node:test";
import { corpusDocuments, runOnDocument, runSemantic } from "../../../test/support/validation.ts";
import { validateWorkloadEntry } from "./workloadentry.ts";

const check = (spec: unknown) => runSemantic(validateWorkloadEntry, spec, { kind: "WorkloadEntry" });

test("WorkloadEntry: address is required unless a network is set", () => {
  assert.deepEqual(check({}).errors, [{ path: "spec.address", message: "address is required" }]);
  const r = check({ network: "net1", labels: { "-x": "y" } });
  assert.deepEqual(r.errors, [{ path: "spec.labels", message: 'invalid tag key: "-x"' }]);
  assert.deepEqual(r.warnings, [{ path: "spec.address", message: 'address is unset with network "net1"' }]);
});

test("WorkloadEntry: unix addresses are absolute paths without ports", () => {
  assert.deepEqual(check({ address: "unix:///sock" }).errors, []);
  assert.deepEqual(check({ address: "unix://rel", ports: { http: 80 } }).errors, [
    { path: "spec.address", message: "rel is not an absolute path to a file" },
    { path: "spec.ports", message: "unix endpoint unix://rel must not include ports" },
  ]);
});

test("WorkloadEntry: the address is an IP or an FQDN", () => {
  assert.deepEqual(check({ address: "1.2.3.4" }).errors, []);
  assert.deepEqual(check({ address: "vm.example.com" }).errors, []);
  assert.deepEqual(check({ address: "not a host" }).errors, [
    { path: "spec.address", message: 'endpoint address "not a host" is not a valid FQDN or an IP address' },
  ]);
});

test("WorkloadEntry: port names and numbers", () => {
  assert.deepEqual(check({ address: "1.2.3.4", ports: { bad_name: 80, http: 0 } }).errors, [
    { path: "spec.ports.bad_name", message: "invalid port name: bad_name" },
    { path: "spec.ports.http", message: "port number 0 must be in the range 1..65535" },
  ]);
});

test("WorkloadEntry: Istio's corpus — valid passes, all 7 invalid documents are rejected", () => {
  for (const doc of corpusDocuments("workloadentry-valid.yaml")) {
    assert.deepEqual(runOnDocument(validateWorkloadEntry, doc).errors, [], doc.metadata.name);
  }
  const invalid = corpusDocuments("workloadentry-invalid.yaml");
  assert.equal(invalid.length, 7);
  for (const doc of invalid)
    assert.notDeepEqual(runOnDocument(validateWorkloadEntry, doc).errors, [], doc.metadata.name);
});
