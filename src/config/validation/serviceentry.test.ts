import assert from "node:assert/strict";
import { test } from "node:test";
import { corpusDocuments, messages, runOnDocument, runSemantic } from "../../../test/support/validation.ts";
import type { ObjectMeta } from "../model.ts";
import { validateServiceEntry } from "./serviceentry.ts";

const check = (spec: unknown, metadata?: ObjectMeta) =>
  runSemantic(validateServiceEntry, spec, { kind: "ServiceEntry", metadata });
const HTTP = { name: "http", number: 80, protocol: "HTTP" };

test("ServiceEntry: selector label errors are returned alone", () => {
  const r = check({ workloadSelector: { labels: { app: "*" } } });
  assert.deepEqual(messages(r.errors), ['wildcard is not supported in selector: "app=*"']);
});

test("ServiceEntry: an empty selector warns; selector and endpoints exclude each other", () => {
  const r = check({
    hosts: ["a.com"],
    workloadSelector: {},
    resolution: "STATIC",
    endpoints: [{ address: "1.1.1.1" }],
  });
  assert.ok(
    r.warnings.some(
      (w) =>
        w.message ===
        "service entry: workload selector specified without labels, will be applied to all services in namespace",
    ),
  );
  assert.deepEqual(messages(r.errors), ["only one of WorkloadSelector or Endpoints is allowed in Service Entry"]);
});

test("ServiceEntry: hosts are required, * is invalid, partial wildcards warn", () => {
  assert.deepEqual(messages(check({}).errors), ["service entry must have at least one host"]);
  assert.deepEqual(check({ hosts: ["*"] }).errors, [{ path: "spec.hosts[0]", message: "invalid host *" }]);
  assert.deepEqual(check({ hosts: ["*foo.com"] }).warnings, [
    { path: "spec.hosts[0]", message: 'partial wildcard "*foo.com" not allowed' },
  ]);
});

test("ServiceEntry: addresses are IPs or CIDRs; CIDRs only with NONE/STATIC", () => {
  assert.deepEqual(messages(check({ hosts: ["a.com"], addresses: ["1.2.3"] }).errors), ["1.2.3 is not a valid IP"]);
  assert.deepEqual(
    messages(check({ hosts: ["a.com"], addresses: ["10.0.0.0/8"], resolution: "DNS", ports: [HTTP] }).errors),
    ["CIDR addresses are allowed only for NONE/STATIC resolution types"],
  );
});

test("ServiceEntry: port names and numbers are unique and valid", () => {
  const ports = [HTTP, { name: "http", number: 80, protocol: "FOO", targetPort: 70000 }, null];
  assert.deepEqual(check({ hosts: ["a.com"], ports }).errors, [
    { path: "spec.ports[1].name", message: 'service entry port name "http" already defined' },
    { path: "spec.ports[1].number", message: "service entry port 80 already defined" },
    { path: "spec.ports[1].targetPort", message: "port number 70000 must be in the range 1..65535" },
    { path: "spec.ports[1].protocol", message: "unsupported protocol: FOO" },
    { path: "spec.ports[2]", message: "service entry port may not be null" },
  ]);
});

test("ServiceEntry: TCP ports without addresses warn when auto-allocation is off", () => {
  const tcp = { hosts: ["a.com"], resolution: "DNS", ports: [{ name: "tcp", number: 9000 }] };
  assert.deepEqual(check(tcp).warnings, []);
  const optOut = { name: "n", namespace: "ns", labels: { "networking.istio.io/enable-autoallocate-ip": "False" } };
  assert.deepEqual(messages(check(tcp, optOut).warnings), [
    "addresses are required for ports serving TCP (or unset) protocol when IP Autoallocation is not enabled",
  ]);
  assert.equal(check({ ...tcp, resolution: "NONE" }).warnings.length, 1);
});

test("ServiceEntry: NONE resolution takes no endpoints and warns about a selector", () => {
  assert.deepEqual(messages(check({ hosts: ["a.com"], endpoints: [{ address: "1.1.1.1" }] }).errors), [
    "no endpoints should be provided for resolution type none",
  ]);
  assert.ok(
    messages(check({ hosts: ["a.com"], workloadSelector: { labels: { a: "b" } } }).warnings).includes(
      "workloadSelector should not be set when resolution mode is NONE",
    ),
  );
});

test("ServiceEntry: STATIC endpoints are IPs whose ports the service declares", () => {
  const spec = {
    hosts: ["a.com"],
    resolution: "STATIC",
    ports: [HTTP],
    endpoints: [{ address: "vm.example.com", ports: { grpc: 90 } }, null, { address: "unix:///sock" }],
  };
  assert.deepEqual(check(spec).errors, [
    { path: "spec.endpoints[0].address", message: 'endpoint address "vm.example.com" is not a valid IP address' },
    { path: "spec.endpoints[0].ports.grpc", message: "endpoint port 90 is not defined by the service entry" },
    { path: "spec.endpoints[1]", message: "endpoint cannot be nil" },
  ]);
  assert.deepEqual(
    messages(
      check({ ...spec, ports: [HTTP, { ...HTTP, name: "h2", number: 81 }], endpoints: [{ address: "unix:///sock" }] })
        .errors,
    ),
    ["exactly 1 service port required for unix endpoints"],
  );
});

test("ServiceEntry: DNS without endpoints needs FQDN hosts", () => {
  assert.deepEqual(check({ hosts: ["*.a.com"], resolution: "DNS", ports: [HTTP] }).errors, [
    {
      path: "spec.hosts[0]",
      message:
        'hosts must be FQDN or contain only prefix wildcards if no endpoints are provided for resolution mode DNS, domain name "*.a.com" invalid (label "*" invalid)',
    },
  ]);
});

test("ServiceEntry: DNS endpoints are IPs or FQDNs with declared ports; DNS_ROUND_ROBIN allows one", () => {
  const spec = {
    hosts: ["a.com"],
    resolution: "DNS_ROUND_ROBIN",
    ports: [HTTP],
    endpoints: [{ address: "unix:///x", ports: { tcp: 1 } }, { address: "b.com" }],
  };
  assert.deepEqual(messages(check(spec).errors), [
    "there must only be 0 or 1 endpoint for resolution mode DNS_ROUND_ROBIN",
    'endpoint address "unix:///x" is not a valid FQDN or an IP address',
    "endpoint port 1 is not defined by the service entry",
  ]);
});

test("ServiceEntry: DNS with addresses, TCP port and several hosts warns", () => {
  const spec = {
    hosts: ["a.com", "b.com"],
    addresses: ["1.1.1.1"],
    resolution: "DNS",
    ports: [{ name: "t", number: 1, protocol: "TLS" }],
  };
  const r = check(spec);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(messages(r.warnings), [
    "service entry can not have more than one host specified simultaneously with address and tcp port",
  ]);
});

test("ServiceEntry: DYNAMIC_DNS needs wildcard hosts, no addresses or endpoints, HTTP-ish ports", () => {
  const spec = {
    hosts: ["a.com"],
    addresses: ["1.1.1.1"],
    endpoints: [{ address: "1.1.1.1" }],
    resolution: "DYNAMIC_DNS",
    ports: [{ name: "t", number: 1, protocol: "TCP" }],
  };
  assert.deepEqual(messages(check(spec).errors), [
    "host must be wildcarded for resolution mode DYNAMIC_DNS",
    "addresses cannot be set for resolution type DYNAMIC_DNS. HTTP route domains will only be generatedfrom the hosts field values",
    "endpoints cannot be set for resolution type DYNAMIC_DNS. Destination IP address determined from hostsfield values",
    "only HTTP, TLS, GRPC, and HTTP2 protocols are supported for resolution type DYNAMIC_DNS",
  ]);
  assert.deepEqual(check({ hosts: ["*foo.com"], resolution: "DYNAMIC_DNS", ports: [HTTP] }).warnings, []);
});

test("ServiceEntry: DYNAMIC_DNS inside the mesh is refused with a waypoint", () => {
  const spec = { hosts: ["*.a.com"], resolution: "DYNAMIC_DNS", location: "MESH_INTERNAL", ports: [HTTP] };
  assert.deepEqual(check(spec).errors, []);
  const waypoint = { name: "n", namespace: "ns", labels: { "istio.io/use-waypoint": "wp" } };
  assert.deepEqual(messages(check(spec, waypoint).errors), [
    "location MESH_INTERNAL with resolution type DYNAMIC_DNS is not supported when using waypoints",
  ]);
  const none = { name: "n", namespace: "ns", labels: { "istio.io/use-waypoint": "None" } };
  assert.deepEqual(check(spec, none).errors, []);
});

test("ServiceEntry: several hosts need HTTP or TLS ports unless resolution is NONE", () => {
  const spec = { hosts: ["a.com", "b.com"], resolution: "DNS", ports: [HTTP, { name: "t", number: 1 }] };
  assert.deepEqual(check(spec).errors, [
    { path: "spec.ports[1]", message: "multiple hosts provided with non-HTTP, non-TLS ports" },
  ]);
  assert.deepEqual(check({ ...spec, resolution: "NONE" }).errors, []);
});

test("ServiceEntry: unknown enum names are decode errors; unknown numbers are unsupported", () => {
  assert.deepEqual(messages(check({ hosts: ["a.com"], resolution: "DNZ" }).errors), [
    'unknown value "\\"DNZ\\"" for enum istio.networking.v1alpha3.ServiceEntry.Resolution',
  ]);
  assert.deepEqual(messages(check({ hosts: ["a.com"], resolution: 9 }).errors), ["unsupported resolution type "]);
});

test("ServiceEntry: exportTo allows ~ alone", () => {
  assert.deepEqual(check({ hosts: ["a.com"], exportTo: ["~"] }).errors, []);
  assert.deepEqual(messages(check({ hosts: ["a.com"], exportTo: ["~", "."] }).errors), [
    "cannot export service entry to no one (~) and someone",
  ]);
});

test("ServiceEntry: Istio's corpus — valid passes, all 12 invalid documents are rejected", () => {
  for (const doc of corpusDocuments("serviceentry-valid.yaml")) {
    assert.deepEqual(runOnDocument(validateServiceEntry, doc).errors, [], doc.metadata.name);
  }
  const invalid = corpusDocuments("serviceentry-invalid.yaml");
  assert.equal(invalid.length, 12);
  for (const doc of invalid)
    assert.notDeepEqual(runOnDocument(validateServiceEntry, doc).errors, [], doc.metadata.name);
});
