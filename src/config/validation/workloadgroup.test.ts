import assert from "node:assert/strict";
import { test } from "node:test";
import { corpusDocuments, runOnDocument, runSemantic } from "../../../test/support/validation.ts";
import { validateWorkloadGroup } from "./workloadgroup.ts";

const check = (spec: unknown) => runSemantic(validateWorkloadGroup, spec, { kind: "WorkloadGroup" });
const TEMPLATE = { template: { address: "not validated!" } };

test("WorkloadGroup: a template is required but not validated", () => {
  assert.deepEqual(check({}).errors, [{ path: "spec.template", message: "template is required" }]);
  assert.deepEqual(check(TEMPLATE).errors, []);
});

test("WorkloadGroup: metadata labels are one multierror", () => {
  assert.deepEqual(check({ ...TEMPLATE, metadata: { labels: { "-a": "b" } } }).errors, [
    { path: "spec.metadata.labels", message: 'invalid labels: 1 error occurred:\n\t* invalid tag key: "-a"\n\n' },
  ]);
});

test("WorkloadGroup: probe counters must not be negative", () => {
  const probe = { periodSeconds: -1, failureThreshold: -2, tcpSocket: { port: 80 } };
  assert.deepEqual(check({ ...TEMPLATE, probe }).errors, [
    { path: "spec.probe.periodSeconds", message: "periodSeconds must be non-negative" },
    { path: "spec.probe.failureThreshold", message: "failureThreshold must be non-negative" },
  ]);
});

test("WorkloadGroup: httpGet probe port, scheme and header names", () => {
  const probe = { httpGet: { port: 0, scheme: "FTP", httpHeaders: [null, { name: "x_y" }] } };
  assert.deepEqual(check({ ...TEMPLATE, probe }).errors, [
    { path: "spec.probe.httpGet.port", message: "port number 0 must be in the range 1..65535" },
    { path: "spec.probe.httpGet.scheme", message: 'httpGet.scheme must be one of "HTTPS", "HTTP"' },
    { path: "spec.probe.httpGet.httpHeaders[0]", message: "invalid nil header" },
    { path: "spec.probe.httpGet.httpHeaders[1].name", message: "header name x_y is not a valid header name" },
  ]);
});

test("WorkloadGroup: exec needs a command; grpc and missing methods are unknown", () => {
  assert.deepEqual(check({ ...TEMPLATE, probe: { exec: {} } }).errors, [
    { path: "spec.probe.exec.command", message: "exec.command is required" },
  ]);
  assert.deepEqual(check({ ...TEMPLATE, probe: { grpc: { port: 80 } } }).errors, [
    { path: "spec.probe.grpc", message: "unknown health check method *v1alpha3.ReadinessProbe_Grpc" },
  ]);
  assert.deepEqual(check({ ...TEMPLATE, probe: { periodSeconds: 1 } }).errors, [
    { path: "spec.probe", message: "unknown health check method <nil>" },
  ]);
  assert.deepEqual(check({ ...TEMPLATE, probe: { tcpSocket: null } }).errors, [
    { path: "spec.probe.tcpSocket", message: "tcpSocket may not be nil" },
  ]);
});

test("WorkloadGroup: Istio's corpus — valid passes, all 3 invalid documents are rejected", () => {
  for (const doc of corpusDocuments("workloadgroup-valid.yaml")) {
    assert.deepEqual(runOnDocument(validateWorkloadGroup, doc).errors, [], doc.metadata.name);
  }
  const invalid = corpusDocuments("workloadgroup-invalid.yaml");
  assert.equal(invalid.length, 3);
  for (const doc of invalid)
    assert.notDeepEqual(runOnDocument(validateWorkloadGroup, doc).errors, [], doc.metadata.name);
});
