// ztunnel's certificates (issue 30): bin/sluiced.js against the test cluster with its CA on and
// CA_TRUSTED_NODE_ACCOUNTS naming a made-up system namespace's `ztunnel` ServiceAccount. Callers
// authenticate with ServiceAccount tokens bound to their pods (TokenRequest with a Pod boundObjectRef,
// so the TokenReview names the pod), and ask for another identity with the ImpersonatedIdentity
// metadata, as ztunnel does. Pods are made with spec.nodeName set (no kubelet runs); they exist
// before sluiced starts, so its first listing holds them, and later changes are waited for.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { istioCa } from "../../src/api/index.ts";
import { createCsr, generateKeyPair } from "../../src/security/ca/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();
const METHOD = "/istio.v1.auth.IstioCertificateService/CreateCertificate";
const REFUSED = "request impersonation authentication failure";

describe("the CA signs for ztunnel on behalf of the pods on its node", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let apps: string;
  let dir: string;
  let sluiced: Sluiced | undefined;
  let roots: Buffer;
  /** Tokens bound to the pods they are named after. */
  const tokens: Record<string, string> = {};
  const identity = (namespace: string, account: string) => `spiffe://cluster.local/ns/${namespace}/sa/${account}`;

  const serviceAccount = (namespace: string, name: string) =>
    cluster.must("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name },
    });
  /** A pod scheduled on `node`; its UID. */
  const pod = async (namespace: string, name: string, account: string, node: string): Promise<string> => {
    const res = await cluster.must("POST", `/api/v1/namespaces/${namespace}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { serviceAccountName: account, nodeName: node, containers: [{ name: "c", image: "c:1" }] },
    });
    return res.body.metadata.uid as string;
  };
  /** A TokenRequest for `account` bound to the pod `name` (uid), for the CA's audience. */
  const boundToken = async (namespace: string, account: string, name: string, uid: string): Promise<string> => {
    const res = await cluster.must("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${account}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        audiences: ["istio-ca"],
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name, uid },
      },
    });
    return res.body.status.token as string;
  };

  /** CreateCertificate with a bound token, as ztunnel calls it: the chain, or the gRPC error. */
  async function createCertificate(token: string, csrIdentity: string, impersonate?: string) {
    const csr = await createCsr(await generateKeyPair("ECDSA-P256"), [csrIdentity]);
    const metadata: JsonObject = impersonate ? { ImpersonatedIdentity: impersonate } : {};
    const headers = new Metadata();
    headers.set("authorization", `Bearer ${token}`);
    headers.set("clusterid", "Kubernetes");
    const client = new Client(`127.0.0.1:${sluiced?.securePort}`, credentials.createSsl(roots), {
      "grpc.ssl_target_name_override": `istiod.${system}.svc`,
    });
    try {
      return await new Promise<string[] | ServiceError>((resolve) => {
        client.makeUnaryRequest(
          METHOD,
          (req: istioCa.IstioCertificateRequest) => Buffer.from(toBinary(istioCa.IstioCertificateRequestSchema, req)),
          (bytes: Buffer) => fromBinary(istioCa.IstioCertificateResponseSchema, bytes),
          create(istioCa.IstioCertificateRequestSchema, { csr, validityDuration: 3600n, metadata }),
          headers,
          (err, response) => resolve(err ?? response?.certChain ?? []),
        );
      });
    } finally {
      client.close();
    }
  }
  const leafSan = (chain: string[] | ServiceError) => {
    assert.ok(Array.isArray(chain), `a certificate, not ${chain instanceof Error ? chain.details : chain}`);
    return new X509Certificate(chain[0]).subjectAltName;
  };
  const seenOf = (answer: string[] | ServiceError) => (Array.isArray(answer) ? "signed" : answer.details);
  const refusal = (answer: string[] | ServiceError) => {
    assert.ok(!Array.isArray(answer), "refused");
    return { code: answer.code, details: answer.details };
  };

  before(async () => {
    cluster = await sharedCluster();
    const label = { "sluice.test/ztunnel-ca": `zt-${process.pid}-${Date.now()}` };
    system = await cluster.namespace("zt-system", label);
    apps = await cluster.namespace("zt-apps", label);
    await serviceAccount(system, "ztunnel");
    await serviceAccount(system, "node-proxy");
    const ztunnelA = await pod(system, "ztunnel-a", "ztunnel", "node-a");
    const ztunnelA2 = await pod(system, "ztunnel-a2", "ztunnel", "node-a");
    const proxyA = await pod(system, "node-proxy-a", "node-proxy", "node-a");
    await pod(apps, "reviews-a", "reviews", "node-a");
    await pod(apps, "ratings-b", "ratings", "node-b");
    tokens["ztunnel-a"] = await boundToken(system, "ztunnel", "ztunnel-a", ztunnelA);
    tokens["ztunnel-a2"] = await boundToken(system, "ztunnel", "ztunnel-a2", ztunnelA2);
    tokens["node-proxy-a"] = await boundToken(system, "node-proxy", "node-proxy-a", proxyA);
    dir = mkdtempSync(join(tmpdir(), "sluice-ztunnel-ca-"));
    const meshConfig = join(dir, "mesh.yaml");
    const [key, value] = Object.entries(label)[0];
    writeFileSync(meshConfig, `discoverySelectors:\n- matchLabels:\n    ${key}: ${value}\n`);
    sluiced = await startSluiced(cluster.kubeconfigPath, {
      secureGrpcAddr: "127.0.0.1:0",
      meshConfig,
      env: {
        POD_NAME: "sluiced-ztunnel-ca-0",
        POD_NAMESPACE: system,
        CA_TRUSTED_NODE_ACCOUNTS: `${system}/ztunnel,not-an-account`,
      },
    });
    const secret = await cluster.must("GET", `/api/v1/namespaces/${system}/secrets/istio-ca-secret`);
    roots = Buffer.from(secret.body.data["root-cert.pem"] as string, "base64");
  });

  after(async () => {
    await sluiced?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("an invalid entry of CA_TRUSTED_NODE_ACCOUNTS is logged and the rest are used", () => {
    assert.match(sluiced?.tail(400) ?? "", /Invalid CA_TRUSTED_NODE_ACCOUNTS, ignoring: not-an-account/);
  });

  test("ztunnel gets its own certificate, and one for a pod on its node", async () => {
    assert.equal(
      leafSan(await createCertificate(tokens["ztunnel-a"], identity(system, "ztunnel"))),
      `URI:${identity(system, "ztunnel")}`,
    );
    const reviews = identity(apps, "reviews");
    assert.equal(leafSan(await createCertificate(tokens["ztunnel-a"], reviews, reviews)), `URI:${reviews}`);
  });

  test("refused for an identity with no pod on its node, until one is scheduled there", async () => {
    const ratings = identity(apps, "ratings");
    assert.deepEqual(refusal(await createCertificate(tokens["ztunnel-a"], ratings, ratings)), {
      code: status.UNAUTHENTICATED,
      details: REFUSED,
    });
    // Impersonation names one identity: a CSR asking for another is refused even for a node account.
    const reviews = identity(apps, "reviews");
    assert.equal(refusal(await createCertificate(tokens["ztunnel-a"], ratings, reviews)).code, status.INVALID_ARGUMENT);
    await pod(apps, "ratings-a", "ratings", "node-a");
    await eventually("a certificate for ratings once its pod is on node-a", async () => {
      const answer = await createCertificate(tokens["ztunnel-a"], ratings, ratings);
      return { ok: Array.isArray(answer), seen: seenOf(answer) };
    });
  });

  test("refused when the caller is not a trusted node account, though it authenticates", async () => {
    const proxy = identity(system, "node-proxy");
    assert.equal(leafSan(await createCertificate(tokens["node-proxy-a"], proxy)), `URI:${proxy}`);
    const reviews = identity(apps, "reviews");
    assert.deepEqual(refusal(await createCertificate(tokens["node-proxy-a"], reviews, reviews)), {
      code: status.UNAUTHENTICATED,
      details: REFUSED,
    });
  });

  test("refused when ztunnel's pod has failed, though its token still authenticates", async () => {
    const reviews = identity(apps, "reviews");
    await cluster.must(
      "PATCH",
      `/api/v1/namespaces/${system}/pods/ztunnel-a/status`,
      { status: { phase: "Failed" } },
      { "content-type": "application/merge-patch+json" },
    );
    // The token still authenticates (its pod exists), but a failed pod is on no node for the CA.
    await eventually("impersonation refused for a failed ztunnel pod", async () => {
      const answer = await createCertificate(tokens["ztunnel-a"], reviews, reviews);
      return {
        ok: !Array.isArray(answer) && answer.details === REFUSED,
        seen: seenOf(answer),
      };
    });
    assert.equal(
      leafSan(await createCertificate(tokens["ztunnel-a"], identity(system, "ztunnel"))),
      `URI:${identity(system, "ztunnel")}`,
    );
  });

  test("refused when ztunnel's pod is gone", async () => {
    const reviews = identity(apps, "reviews");
    assert.equal(leafSan(await createCertificate(tokens["ztunnel-a2"], reviews, reviews)), `URI:${reviews}`);
    await cluster.must("DELETE", `/api/v1/namespaces/${system}/pods/ztunnel-a2?gracePeriodSeconds=0`);
    // Whichever hears of it first refuses: sluiced (the pod is not found; the API server caches a
    // TokenReview's success for 10 s, so this is usually sluiced) or the API server's TokenReview.
    await eventually("the token of a deleted pod refused", async () => {
      const answer = await createCertificate(tokens["ztunnel-a2"], reviews, reviews);
      return { ok: !Array.isArray(answer) && answer.code === status.UNAUTHENTICATED, seen: seenOf(answer) };
    });
  });

  test("the refusals' reasons are logged, without the tokens", () => {
    const log = sluiced?.tail(400) ?? "";
    assert.match(log, /no instances of \\"[^"\\]+\/ratings\\" found on node \\"node-a\\"/);
    assert.match(log, /is not allowed to impersonate/);
    assert.match(log, /pod [^ ]+\/ztunnel-a not found/);
    for (const token of Object.values(tokens)) assert.ok(!log.includes(token.split(".")[2]), "no token signature");
  });
});
