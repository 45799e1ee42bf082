import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConfigObject } from "../../config/index.ts";
import { StaticCollection } from "../../krt/index.ts";
import type { KubernetesInfo } from "../authn/authenticator.ts";
import { NodeAuthorizer, parseTrustedNodeAccounts } from "./node-authorizer.ts";

test("CA_TRUSTED_NODE_ACCOUNTS: namespace/account pairs split at the first slash, the rest ignored", () => {
  assert.deepEqual(parseTrustedNodeAccounts(undefined), { accounts: [], invalid: [] });
  assert.deepEqual(parseTrustedNodeAccounts(""), { accounts: [], invalid: [] });
  assert.deepEqual(parseTrustedNodeAccounts("istio-system/ztunnel"), {
    accounts: [{ namespace: "istio-system", name: "ztunnel" }],
    invalid: [],
  });
  // As Go's strings.Cut: no trimming, an empty entry has no slash, a second slash stays in the name.
  assert.deepEqual(parseTrustedNodeAccounts("kube-system/ztunnel,ztunnel,, ns/sa,a/b/c"), {
    accounts: [
      { namespace: "kube-system", name: "ztunnel" },
      { namespace: " ns", name: "sa" },
      { namespace: "a", name: "b/c" },
    ],
    invalid: ["ztunnel", ""],
  });
});

function pod(namespace: string, name: string, uid: string, serviceAccount: string, node: string, phase = "Running") {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace, name, uid },
    spec: { containers: [], serviceAccountName: serviceAccount, nodeName: node },
    status: { phase },
  } satisfies ConfigObject;
}

const ZTUNNEL: KubernetesInfo = {
  podName: "ztunnel-a",
  podNamespace: "istio-system",
  podUid: "uid-zt",
  podServiceAccount: "ztunnel",
};
const SAME_NODE = "spiffe://cluster.local/ns/ns-a/sa/sa-a";
const OTHER_NODE = "spiffe://cluster.local/ns/ns-b/sa/sa-b";

function authorizer() {
  const pods = new StaticCollection<ConfigObject>(
    [
      pod("istio-system", "ztunnel-a", "uid-zt", "ztunnel", "node-a"),
      pod("ns-a", "pod-a", "uid-a", "sa-a", "node-a"),
      pod("ns-b", "pod-b", "uid-b", "sa-b", "node-b"),
      pod("ns-c", "failed-c", "uid-c", "sa-c", "node-a", "Failed"),
    ],
    { keyOf: (p) => `${p.metadata.namespace}/${p.metadata.name}` },
  );
  return { pods, authorizer: new NodeAuthorizer([{ namespace: "istio-system", name: "ztunnel" }], pods) };
}

test("a trusted node account may have the identity of a pod on its node", () => {
  assert.equal(authorizer().authorizer.refusal(ZTUNNEL, SAME_NODE), undefined);
});

test("refusals, with Istio's reasons", () => {
  const { authorizer: nodes } = authorizer();
  const cases: [KubernetesInfo | undefined, string, string][] = [
    [
      { ...ZTUNNEL, podServiceAccount: "other" },
      SAME_NODE,
      "caller (Pod{Name: ztunnel-a, Namespace: istio-system, UID: uid-zt, ServiceAccount: other}) is not allowed to impersonate",
    ],
    [undefined, SAME_NODE, "caller (Pod{Name: , Namespace: , UID: , ServiceAccount: }) is not allowed to impersonate"],
    [
      ZTUNNEL,
      "spiffe://cluster.local/ns-a/sa-a",
      "failed to validate impersonated identity spiffe://cluster.local/ns-a/sa-a",
    ],
    [{ ...ZTUNNEL, podName: "ztunnel-gone" }, SAME_NODE, "pod istio-system/ztunnel-gone not found"],
    [{ ...ZTUNNEL, podUid: "uid-old" }, SAME_NODE, "pod found, but UID does not match: uid-zt vs uid-old"],
    [ZTUNNEL, OTHER_NODE, 'no instances of "ns-b/sa-b" found on node "node-a"'],
    // A failed pod runs nothing: Istio's informer does not list it.
    [ZTUNNEL, "spiffe://cluster.local/ns/ns-c/sa/sa-c", 'no instances of "ns-c/sa-c" found on node "node-a"'],
  ];
  for (const [caller, identity, reason] of cases) assert.equal(nodes.refusal(caller, identity), reason, identity);
});

test("a pod that moved or changed account is read as it is now", () => {
  const { pods, authorizer: nodes } = authorizer();
  // The ztunnel pod's account changed under the same UID (the API server forbids it; Istio checks anyway).
  pods.upsert(pod("istio-system", "ztunnel-a", "uid-zt", "ztunnel-2", "node-a"));
  assert.equal(nodes.refusal(ZTUNNEL, SAME_NODE), "pod found, but ServiceAccount does not match: ztunnel-2 vs ztunnel");
  pods.upsert(pod("istio-system", "ztunnel-a", "uid-zt", "ztunnel", "node-a"));
  // The workload goes; another of its account arrives on node B; the ztunnel pod fails.
  pods.delete("ns-a/pod-a");
  assert.equal(nodes.refusal(ZTUNNEL, SAME_NODE), 'no instances of "ns-a/sa-a" found on node "node-a"');
  pods.upsert(pod("ns-b", "pod-b2", "uid-b2", "sa-b", "node-a"));
  assert.equal(nodes.refusal(ZTUNNEL, OTHER_NODE), undefined);
  pods.upsert(pod("istio-system", "ztunnel-a", "uid-zt", "ztunnel", "node-a", "Failed"));
  assert.equal(nodes.refusal(ZTUNNEL, OTHER_NODE), "pod istio-system/ztunnel-a not found");
});
