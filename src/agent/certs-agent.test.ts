// runAgent with certificates: the pod's identity from its environment, the certificate fetched from
// the CA into OUTPUT_CERTS (readiness waits for it), and SDS served on its socket.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client, credentials } from "@grpc/grpc-js";
import { pino } from "pino";
import { ISTIOD_NAME, spiffeId, TestCa } from "../../test/proxyless/mtls-ca.ts";
import { SotwClient } from "../../test/support/ads-client.ts";
import { deserializer, methodPath, serializer } from "../api/grpc-service.ts";
import { sds, tls, unpackAny } from "../api/index.ts";
import { TypeUrl } from "../xds/types.ts";
import { runAgent } from "./agent.ts";
import { grpcReadyProbe } from "./grpc-ready.ts";

let ca: TestCa;
let dir: string;

before(async () => {
  ca = await TestCa.start({ "cart-token": spiffeId("cart", "shop") });
  dir = mkdtempSync(join(tmpdir(), "sluice-agent-certs-"));
});

after(async () => {
  await ca.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the agent fetches the pod's certificate, is ready once the files exist, and serves them over SDS", async () => {
  const certDir = join(dir, "certs");
  const socket = join(dir, "sds", "socket");
  const agent = await runAgent({
    env: {
      POD_NAME: "cart-1",
      POD_NAMESPACE: "shop",
      INSTANCE_IP: "127.0.0.1",
      SERVICE_ACCOUNT: "cart",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
    },
    proxyConfig: { discoveryAddress: ca.address, statusPort: 0 },
    podInfoDir: join(dir, "absent"),
    hostIPs: [],
    certDir,
    bootstrapPath: join(dir, "grpc-bootstrap.json"),
    certificates: {
      caAddress: ca.address,
      caRootCertPath: ca.rootCertPath,
      caServerName: ISTIOD_NAME,
      tokenPath: ca.tokenFile("cart.token", "cart-token"),
      sdsSocketPath: socket,
    },
    log: pino({ level: "silent" }),
  });
  const client = new Client(`unix:${socket}`, credentials.createInsecure());
  const m = sds.SecretDiscoveryService.method.streamSecrets;
  const stream = new SotwClient(
    client,
    client.makeBidiStreamRequest(methodPath(m), serializer(m.input), deserializer(m.output)),
  );
  try {
    // SDS answers once the first certificate is there.
    stream.request({ typeUrl: TypeUrl.Secret, resourceNames: ["default"] });
    const [any] = (await stream.next()).resources;
    const secret = any && unpackAny(any, tls.SecretSchema);
    assert.ok(secret?.type.case === "tlsCertificate");
    const chain = secret.type.value.certificateChain?.specifier;
    assert.ok(chain?.case === "inlineBytes");
    const served = Buffer.from(chain.value).toString();
    assert.equal(readFileSync(join(certDir, "cert-chain.pem"), "utf8"), served);
    assert.equal(new X509Certificate(served).subjectAltName, `URI:${spiffeId("cart", "shop")}`);
    assert.equal(new X509Certificate(served).publicKey.asymmetricKeyType, "ec");
    // The bootstrap's file_watcher files are all there: the readiness probe passes.
    assert.doesNotThrow(grpcReadyProbe(join(dir, "grpc-bootstrap.json")));
  } finally {
    stream.close();
    await agent.stop("test done");
  }
  assert.equal(await agent.stopped, "test done");
});
