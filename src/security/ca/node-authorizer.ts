// Istio's node authorizer (security/pkg/server/ca/node_auth.go), a small part of Kubernetes' Node
// authorization: a node proxy (ztunnel) may ask the CA for the identity of a pod on its own node.
// The caller's ServiceAccount must be one of CA_TRUSTED_NODE_ACCOUNTS, the pod its token is bound to
// must still be the one the token names, and some pod of the requested ServiceAccount must be
// scheduled on that pod's node. Pods come from the config store, as the cluster source lists them.
import type { ConfigObject } from "../../config/index.ts";
import { type Collection, type Index, index } from "../../krt/index.ts";
import type { KubernetesInfo } from "../authn/authenticator.ts";
import { parseSpiffeId } from "../authn/spiffe.ts";

/** A ServiceAccount by namespace and name (Istio's types.NamespacedName). */
export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/**
 * CA_TRUSTED_NODE_ACCOUNTS: `<namespace>/<serviceaccount>,...`, split at the first `/` of each entry
 * as Istio does. Entries without one are returned as `invalid` (istiod warns and ignores them).
 */
export function parseTrustedNodeAccounts(value: string | undefined): {
  accounts: ServiceAccountRef[];
  invalid: string[];
} {
  const accounts: ServiceAccountRef[] = [];
  const invalid: string[] = [];
  if (!value) return { accounts, invalid };
  for (const entry of value.split(",")) {
    const slash = entry.indexOf("/");
    if (slash < 0) invalid.push(entry);
    else accounts.push({ namespace: entry.slice(0, slash), name: entry.slice(slash + 1) });
  }
  return { accounts, invalid };
}

/** What the authorizer reads of a Pod (the kube source keeps these fields: sources/kube/strip.ts). */
interface PodFields {
  spec?: { nodeName?: string; serviceAccountName?: string };
  status?: { phase?: string };
}
const fieldsOf = (pod: ConfigObject) => pod as PodFields;

/** Istio's informer lists pods with `status.phase!=Failed`: a failed pod is not there for it. */
const counted = (pod: ConfigObject) => fieldsOf(pod).status?.phase !== "Failed";

/** The index key of a ServiceAccount on a node; no part of it can hold a `/` in Kubernetes. */
const nodeAccountKey = (node: string, namespace: string, serviceAccount: string) =>
  `${node}/${namespace}/${serviceAccount}`;

/** Istio's "saNode" index: a scheduled pod with a ServiceAccount, under its node and account. */
function podNodeAccount(pod: ConfigObject): string[] {
  const { nodeName, serviceAccountName } = fieldsOf(pod).spec ?? {};
  if (!nodeName || !serviceAccountName || !counted(pod)) return [];
  return [nodeAccountKey(nodeName, pod.metadata.namespace ?? "", serviceAccountName)];
}

/** `Pod{Name: ..., Namespace: ..., UID: ..., ServiceAccount: ...}`, as Istio prints a caller. */
function describeCaller(caller: KubernetesInfo): string {
  return `Pod{Name: ${caller.podName}, Namespace: ${caller.podNamespace}, UID: ${caller.podUid}, ServiceAccount: ${caller.podServiceAccount}}`;
}

export class NodeAuthorizer {
  readonly #trusted: readonly ServiceAccountRef[];
  readonly #pods: Collection<ConfigObject>;
  readonly #byNodeAccount: Index<ConfigObject>;

  /** `pods`: the store's Pod collection (keyed `namespace/name`); the index on it lives as long as it. */
  constructor(trustedAccounts: readonly ServiceAccountRef[], pods: Collection<ConfigObject>) {
    this.#trusted = trustedAccounts;
    this.#pods = pods;
    this.#byNodeAccount = index(pods, podNodeAccount, "ca/pods-by-node-account");
  }

  /**
   * Why `caller` may not have a certificate for `requestedIdentity` (a SPIFFE id), or undefined when
   * it may. A caller authenticated other than by a Kubernetes token has no pod and is refused.
   * The reasons are for the log only: the caller is told no more than that impersonation failed.
   */
  refusal(caller: KubernetesInfo | undefined, requestedIdentity: string): string | undefined {
    const who = caller ?? { podName: "", podNamespace: "", podUid: "", podServiceAccount: "" };
    if (!this.#trusted.some((a) => a.namespace === who.podNamespace && a.name === who.podServiceAccount)) {
      return `caller (${describeCaller(who)}) is not allowed to impersonate`;
    }
    const requested = parseSpiffeId(requestedIdentity);
    if (!requested) return `failed to validate impersonated identity ${requestedIdentity}`;
    const pod = this.#pods.get(`${who.podNamespace}/${who.podName}`);
    if (!pod || !counted(pod)) return `pod ${who.podNamespace}/${who.podName} not found`;
    // A pod made again under the same name: the caller's token is for the old one (it retries).
    const uid = pod.metadata.uid ?? "";
    if (uid !== who.podUid) return `pod found, but UID does not match: ${uid} vs ${who.podUid}`;
    const { nodeName = "", serviceAccountName = "" } = fieldsOf(pod).spec ?? {};
    if (serviceAccountName !== who.podServiceAccount) {
      return `pod found, but ServiceAccount does not match: ${serviceAccountName} vs ${who.podServiceAccount}`;
    }
    const key = nodeAccountKey(nodeName, requested.namespace, requested.serviceAccount);
    if (this.#byNodeAccount.lookup(key).length === 0) {
      return `no instances of "${requested.namespace}/${requested.serviceAccount}" found on node "${nodeName}"`;
    }
    return undefined;
  }
}
