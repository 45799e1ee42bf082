import assert from "node:assert/strict";
import { test } from "node:test";
import { renderControlPlane, renderRemoteReader } from "./render.ts";
import { loadValues, Values } from "./values.ts";

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
const rulesOf = (objects: ReturnType<typeof renderRemoteReader>, kind: string) =>
  objects
    .filter((o) => o.kind === kind)
    .flatMap((o) => (o as unknown as { rules: Rule[] }).rules)
    .filter((r) => r.verbs.some((v) => v !== "list" && v !== "watch"));

test("the remote-secret reader reads only (its system namespace's ConfigMaps too), unless a control plane outside the cluster leads it", () => {
  const reader = renderRemoteReader(new Values(loadValues([])));
  assert.deepEqual(
    reader.map((o) => o.kind),
    ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
  );
  assert.deepEqual(rulesOf(reader, "ClusterRole"), []);
  assert.deepEqual(rulesOf(reader, "Role"), []);
  // The mesh ConfigMap of the system namespace (the cluster's trust domain), read only.
  assert.deepEqual((reader.find((o) => o.kind === "Role") as unknown as { rules: Rule[] }).rules, [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] },
  ]);

  const led = renderRemoteReader(new Values(loadValues([], ["istiodRemote.enabled=true", "revision=blue"])));
  assert.deepEqual(
    led.map((o) => `${o.kind}/${o.metadata.name}`),
    [
      "ServiceAccount/istio-reader-service-account",
      "ClusterRole/istio-reader-clusterrole-blue-istio-system",
      "ClusterRoleBinding/istio-reader-clusterrole-blue-istio-system",
      "Role/istio-reader-blue",
      "RoleBinding/istio-reader-blue",
    ],
  );
  // The namespace controller's writes: ConfigMaps everywhere, its Lease in the system namespace only.
  assert.deepEqual(rulesOf(led, "ClusterRole"), [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch", "create", "update"] },
  ]);
  assert.deepEqual(rulesOf(led, "Role"), [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
  ]);
  const role = led.find((o) => o.kind === "Role");
  assert.equal(role?.metadata.namespace, "istio-system");
  const binding = led.find((o) => o.kind === "RoleBinding") as unknown as { subjects: unknown[] };
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: "istio-reader-service-account", namespace: "istio-system" },
  ]);
});

test("istiod trusts ztunnel of its own namespace for its pods' certificates, as Istio's chart, unless told otherwise", () => {
  const trusted = (sets: string[]) => {
    const objects = renderControlPlane(new Values(loadValues([], sets)));
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    return deployment.spec.template.spec.containers[0]?.env.filter((e) => e.name === "CA_TRUSTED_NODE_ACCOUNTS");
  };
  assert.deepEqual(trusted([]), [{ name: "CA_TRUSTED_NODE_ACCOUNTS", value: "istio-system/ztunnel" }]);
  assert.deepEqual(trusted(["pilot.trustedZtunnelNamespace=kube-system", "pilot.trustedZtunnelName=zt"]), [
    { name: "CA_TRUSTED_NODE_ACCOUNTS", value: "kube-system/zt" },
  ]);
  assert.deepEqual(trusted(["pilot.env.CA_TRUSTED_NODE_ACCOUNTS=ns/a"]), [
    { name: "CA_TRUSTED_NODE_ACCOUNTS", value: "ns/a" },
  ]);
});
