import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewayTemplateInput } from "../../../test/support/gateway-template-input.ts";
import { kubeGatewayObjects } from "./kube-gateway.ts";

const input = (namespaceAnnotations: Record<string, string> = {}) => gatewayTemplateInput({ namespaceAnnotations });

const kinds = (objects: { kind?: unknown }[]) => objects.map((o) => o.kind);
const proxy = (objects: Record<string, unknown>[]) => {
  const deployment = objects.find((o) => o.kind === "Deployment") as {
    spec: { template: { spec: { containers: { securityContext: { runAsUser: number; runAsGroup: number } }[] } } };
  };
  return deployment.spec.template.spec.containers[0];
};

test("without overlays: ServiceAccount, Deployment and Service; the autoscaler and budget only when overlaid", () => {
  assert.deepEqual(kinds(kubeGatewayObjects(input())), ["ServiceAccount", "Deployment", "Service"]);
  const overlaid = kubeGatewayObjects(input(), [{ podDisruptionBudget: "spec:\n  minAvailable: 1\n" }]);
  assert.deepEqual(kinds(overlaid), ["ServiceAccount", "Deployment", "Service", "PodDisruptionBudget"]);
});

test("overlays apply in order, the later one winning", () => {
  const objects = kubeGatewayObjects(input(), [
    { deployment: "spec:\n  replicas: 2\n" },
    { deployment: "spec:\n  replicas: 3\n" },
  ]);
  assert.equal((objects[1].spec as { replicas: number }).replicas, 3);
});

test("an unknown overlay key, or one renaming an object, is refused", () => {
  assert.throws(() => kubeGatewayObjects(input(), [{ deployments: "spec: {}" }]), /unsupported overlay "deployments"/);
  assert.throws(
    () => kubeGatewayObjects(input(), [{ service: "metadata:\n  name: elsewhere\n" }]),
    /illegal metadata change/,
  );
});

test("the proxy runs as 1337, or on OpenShift as the top of the namespace's preallocated ranges", () => {
  assert.deepEqual(
    [
      proxy(kubeGatewayObjects(input())).securityContext.runAsUser,
      proxy(kubeGatewayObjects(input())).securityContext.runAsGroup,
    ],
    [1337, 1337],
  );
  const openshift = proxy(
    kubeGatewayObjects(
      input({
        "openshift.io/sa.scc.uid-range": "1000620000/10000",
        "openshift.io/sa.scc.supplemental-groups": "1000620000-1000629999,5000/10",
      }),
    ),
  );
  assert.deepEqual(
    [openshift.securityContext.runAsUser, openshift.securityContext.runAsGroup],
    [1000629999, 1000629999],
  );
});
