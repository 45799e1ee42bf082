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
    assert.deepEqual(
      result.errors.map((e) => e.split(" ").slice(0, 4).join(" ")),
      [
        'spec.ports[2]: port name "web"',
        "spec.ports[3]: unnamed port: Istio",
        'spec.ports[5]: appProtocol "kafka" does',
      ],
    );
    assert.equal(result.namespace, "default");
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
    const unlabeled = report(deployment({ team: "a" }));
    assert.equal(unlabeled.valid, true);
    assert.deepEqual(unlabeled.warnings, [
      'spec.template.metadata.labels: may not provide Istio metrics and telemetry without the label "app" (or service.istio.io/canonical-name, app.kubernetes.io/name) and "version" (or service.istio.io/canonical-revision, app.kubernetes.io/version); see https://istio.io/latest/docs/ops/deployment/application-requirements/',
    ]);
    assert.deepEqual(report(deployment({ "app.kubernetes.io/name": "web", version: "v1" })).warnings, []);
  });

  test("other kinds Sluice does not know are not validated, with a warning", () => {
    const job = report({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" } });
    assert.deepEqual([job.valid, job.warnings], [true, ["not validated: Sluice does not know batch/v1 Job"]]);
    // An unknown kind in a mesh API group is a mistake, not a foreign object.
    const typo = report({ apiVersion: "networking.istio.io/v1", kind: "VirtualServce", metadata: { name: "v" } });
    assert.equal(typo.valid, false);
  });
});
