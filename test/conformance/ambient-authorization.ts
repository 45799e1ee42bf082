// Istio's ambient policy conversion goldens (TestRBACConvert; see ambient-authorization/README.md in
// the corpus): each `<case>-in.yaml` holds one AuthorizationPolicy, or PeerAuthentications sorted into
// the workload's, its namespace's and the mesh's (root namespace `istio-system`), converted to ztunnel's
// `istio.security.Authorization` and compared with `<case>.yaml` as protobuf JSON, both parsed; an empty
// golden means no Authorization (`<case>`). Istio runs the conversion again with ambient multi-network
// on; Sluice's conversion reads no such flag, so once is the same.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { parse } from "yaml";
import { convertAuthorizationPolicy, convertPeerAuthentication } from "../../src/ambient/index.ts";
import { registry, security } from "../../src/api/index.ts";
import { decodeConfigText } from "../../src/config/decode.ts";
import type { AuthorizationPolicy, PeerAuthentication } from "../../src/config/types/index.ts";
import { canonicalJson } from "./authz-rbac.ts";
import type { CaseResult, Corpus } from "./corpus.ts";

export const CORPUS_DIR = "ambient-authorization";
const ROOT_NAMESPACE = "istio-system";
const INPUT_SUFFIX = "-in.yaml";

export const ambientAuthorization: Corpus = {
  name: CORPUS_DIR,
  cases(root) {
    const dir = join(root, CORPUS_DIR);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((file) => file.endsWith(INPUT_SUFFIX))
      .map((file) => file.slice(0, -INPUT_SUFFIX.length))
      .sort()
      .map((name) => ({ id: name, run: () => runCase(dir, name) }));
  },
};

function runCase(dir: string, name: string): CaseResult {
  const input = `${name}${INPUT_SUFFIX}`;
  const objects = decodeConfigText(readFileSync(join(dir, input), "utf8"), input).map((doc) => {
    if (!doc.object) throw new Error(`cannot decode ${input}#${doc.position.index}: ${doc.error}`);
    return doc.object;
  });
  const authorization =
    objects[0]?.kind === "AuthorizationPolicy"
      ? convertAuthorizationPolicy(objects[0] as AuthorizationPolicy, ROOT_NAMESPACE, { dryRunPolicies: false })
          .authorization
      : convertPeerAuthentications(objects as PeerAuthentication[]);
  const got = authorization ? canonicalJson(security.AuthorizationSchema, authorization) : "nothing";
  const golden = parse(readFileSync(join(dir, `${name}.yaml`), "utf8")) as JsonValue | null;
  const want = golden
    ? canonicalJson(security.AuthorizationSchema, fromJson(security.AuthorizationSchema, golden, { registry }))
    : "nothing";
  return got === want
    ? { pass: true, detail: "equal to the golden" }
    : { pass: false, detail: `got ${got}, want ${want}` };
}

/** As TestRBACConvert sorts them: one policy is the workload's; of several, the oldest of each level. */
function convertPeerAuthentications(policies: PeerAuthentication[]) {
  if (policies.length === 1) return convertPeerAuthentication(policies[0]!, undefined, undefined, ROOT_NAMESPACE);
  let workload: PeerAuthentication | undefined;
  let namespace: PeerAuthentication | undefined;
  let mesh: PeerAuthentication | undefined;
  for (const policy of policies) {
    if (policy.metadata.namespace === ROOT_NAMESPACE) mesh = older(mesh, policy);
    else if (policy.spec?.selector) workload = policy;
    else namespace = older(namespace, policy);
  }
  // Without a workload policy the namespace's stands in for it (and converts to nothing).
  if (!workload) return namespace && convertPeerAuthentication(namespace, undefined, mesh, ROOT_NAMESPACE);
  return convertPeerAuthentication(workload, namespace, mesh, ROOT_NAMESPACE);
}

/** The policy created first; the one held on a tie. */
function older(held: PeerAuthentication | undefined, policy: PeerAuthentication): PeerAuthentication {
  const created = (p: PeerAuthentication) => Date.parse(p.metadata.creationTimestamp ?? "") || 0;
  return held && created(held) <= created(policy) ? held : policy;
}
