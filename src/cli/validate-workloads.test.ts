import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { DecodedDocument } from "../config/decode.ts";
import type { ConfigObject } from "../config/index.ts";
import { validateDocument } from "./validate-report.ts";

const report = (object: ConfigObject) =>
  validateDocument({ position: { file: "f.yaml", index: 0, line: 1 }, object } satisfies DecodedDocument);

const service = (ports: unknown[], namespace?: string): ConfigObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace },
  spec: { ports },
});

describe("istioctl's workload checks", () => {
  test("Service ports must name their protocol or set a known appProtocol", () => {
    const result = report(
      service([
        { port: 80, name: "http-web" },
        { port: 81, name: "grpc" },
        { port: 82, name: "web" },
        { port: 83 },
        { port: 84, appProtocol: "HTTP2" },
        { port: 85, appProtocol: "kafka" },
        { port: 86, protocol: "UDP" },
      ]),
    );
    assert.equal(result.valid, false);
    // istioctl validate's messages, word for word, with the object's namespace as written (none here).
    assert.deepEqual(result.errors, [
      'spec.ports[2]: service "web//:" port "web" does not follow the Istio naming convention. See https://istio.io/latest/docs/ops/deployment/requirements/',
      'spec.ports[3]: service "web//:" has an unnamed port. This is not recommended, See https://istio.io/latest/docs/ops/deployment/requirements/',
      'spec.ports[5]: service "web//:" doesn\'t follow Istio protocol selection. This is not recommended, See https://istio.io/latest/docs/ops/configuration/traffic-management/protocol-selection/',
    ]);
    assert.equal(result.namespace, "default");
    assert.match(report(service([{ port: 83 }], "shop")).errors[0], /^spec\.ports\[0\]: service "web\/shop\/:" has/);
  });

  test("objects in istio-system are exempt", () => {
    assert.equal(report(service([{ port: 83 }], "istio-system")).valid, true);
  });

  test("a Deployment without canonical service labels is valid with a warning", () => {
    const deployment = (labels: Record<string, string>): ConfigObject => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: { template: { metadata: { labels } } },
    });
    const unlabeled = report(deployment({ team: "a", app: "web" }));
    assert.equal(unlabeled.valid, true);
    // The labels as Go's %q prints a map: keys sorted, each key and value quoted.
    assert.deepEqual(unlabeled.warnings, [
      'spec.template.metadata.labels: may not provide Istio metrics and telemetry labels: map["app":"web" "team":"a"]. See https://istio.io/latest/docs/ops/deployment/requirements/',
    ]);
    assert.deepEqual(report(deployment({ "app.kubernetes.io/name": "web", version: "" })).warnings, []);
  });

  test("other kinds Sluice does not know are not validated, and nothing is said, as istioctl", () => {
    const job = report({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" } });
    assert.deepEqual([job.valid, job.errors, job.warnings], [true, [], []]);
    // An unknown kind in a mesh API group is a mistake, not a foreign object.
    const typo = report({ apiVersion: "networking.istio.io/v1", kind: "VirtualServce", metadata: { name: "v" } });
    assert.equal(typo.valid, false);
  });
});
