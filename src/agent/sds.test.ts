// The agent's SDS server, read by a raw gRPC SecretDiscoveryService client over its Unix socket:
// `default` and `ROOTCA` as Envoy asks for them, ACKs answered with silence, a renewal pushed again.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Client, credentials, status } from "@grpc/grpc-js";
import { pino } from "pino";
import { SotwClient } from "../../test/support/ads-client.ts";
import { anyViolations } from "../../test/support/pgv.ts";
import { deserializer, methodPath, serializer } from "../api/grpc-service.ts";
import { discovery, sds, tls, unpackAny } from "../api/index.ts";
import { TypeUrl } from "../xds/types.ts";
import type { WorkloadSecret } from "./certs.ts";
import { type SdsServer, startSdsServer } from "./sds.ts";

/** A stand-in for WorkloadCertificates: tests publish secrets by hand. */
class FakeCertificates {
  current: WorkloadSecret | undefined;
  readonly listeners = new Set<(s: WorkloadSecret) => void>();
  onUpdate(listener: (s: WorkloadSecret) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  publish(n: number): WorkloadSecret {
    this.current = {
      certChainPem: `chain-${n}`,
      keyPem: `key-${n}`,
      rootCertPem: `root-${n}`,
      createdAt: 0,
      expiresAt: 1,
    };
    for (const l of this.listeners) l(this.current);
    return this.current;
  }
}

let dir: string;
let socket: string;
let server: SdsServer;
const certificates = new FakeCertificates();
const clients: SotwClient[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "sluice-sds-"));
  socket = join(dir, "socket");
  server = await startSdsServer({ socketPath: socket, certificates, log: pino({ level: "silent" }) });
});

after(async () => {
  for (const c of clients) c.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function connect(): SotwClient {
  const client = new Client(`unix:${socket}`, credentials.createInsecure());
  const m = sds.SecretDiscoveryService.method.streamSecrets;
  const stream = new SotwClient(
    client,
    client.makeBidiStreamRequest(methodPath(m), serializer(m.input), deserializer(m.output)),
  );
  clients.push(stream);
  return stream;
}

function secrets(res: discovery.DiscoveryResponse): tls.Secret[] {
  for (const any of res.resources) assert.deepEqual(anyViolations(any), []);
  return res.resources.map((any) => {
    const secret = unpackAny(any, tls.SecretSchema);
    assert.ok(secret);
    return secret;
  });
}

const text = (source: { specifier: { case: string | undefined; value?: unknown } } | undefined) =>
  source?.specifier.case === "inlineBytes" ? Buffer.from(source.specifier.value as Uint8Array).toString() : undefined;

test("a stream asking before the first certificate is answered once there is one", async () => {
  const stream = connect();
  stream.request({ typeUrl: TypeUrl.Secret, resourceNames: ["default"], node: { id: "sidecar~1.2.3.4~a.ns~ns.svc" } });
  const pending = stream.next();
  certificates.publish(1);
  const res = await pending;
  assert.equal(res.typeUrl, TypeUrl.Secret);
  const [secret] = secrets(res);
  assert.equal(secret?.name, "default");
  assert.equal(secret?.type.case, "tlsCertificate");
  if (secret?.type.case !== "tlsCertificate") return;
  assert.equal(text(secret.type.value.certificateChain), "chain-1");
  assert.equal(text(secret.type.value.privateKey), "key-1");
});

test("ROOTCA is the validation context; an ACK gets no answer; a renewal is pushed to every stream", async () => {
  const root = connect();
  root.request({ typeUrl: TypeUrl.Secret, resourceNames: ["ROOTCA"] });
  const first = await root.next();
  const [ca] = secrets(first);
  assert.equal(ca?.name, "ROOTCA");
  assert.ok(ca?.type.case === "validationContext");
  assert.equal(text(ca.type.value.trustedCa), "root-1");
  root.ack(first, ["ROOTCA"]);

  const workload = connect();
  workload.request({ typeUrl: TypeUrl.Secret, resourceNames: ["default"] });
  const workloadFirst = await workload.next();
  workload.ack(workloadFirst, ["default"]);

  certificates.publish(2);
  const [renewedRoot, renewedWorkload] = await Promise.all([root.next(), workload.next()]);
  // The ACKs were not answered: the next response on each stream is the renewal.
  assert.notEqual(renewedRoot.versionInfo, first.versionInfo);
  const [newCa] = secrets(renewedRoot);
  assert.ok(newCa?.type.case === "validationContext");
  assert.equal(text(newCa.type.value.trustedCa), "root-2");
  const [newCert] = secrets(renewedWorkload);
  assert.ok(newCert?.type.case === "tlsCertificate");
  assert.equal(text(newCert.type.value.privateKey), "key-2");
});

test("names other than default and ROOTCA are not served", async () => {
  const stream = connect();
  stream.request({ typeUrl: TypeUrl.Secret, resourceNames: ["default", "kubernetes://other"] });
  assert.deepEqual(
    secrets(await stream.next()).map((s) => s.name),
    ["default"],
  );
});

test("FetchSecrets answers the current secrets; delta SDS is unimplemented", async () => {
  const client = new Client(`unix:${socket}`, credentials.createInsecure());
  try {
    const m = sds.SecretDiscoveryService.method.fetchSecrets;
    const res = await new Promise<discovery.DiscoveryResponse>((resolve, reject) =>
      client.makeUnaryRequest(
        methodPath(m),
        serializer(m.input),
        deserializer(m.output),
        create(discovery.DiscoveryRequestSchema, { resourceNames: ["ROOTCA", "default"] }),
        (err, r) => (err || !r ? reject(err) : resolve(r)),
      ),
    );
    assert.deepEqual(
      secrets(res).map((s) => s.name),
      ["ROOTCA", "default"],
    );
    const d = sds.SecretDiscoveryService.method.deltaSecrets;
    const delta = client.makeBidiStreamRequest(methodPath(d), serializer(d.input), deserializer(d.output));
    const code = await new Promise<number>((resolve) => delta.on("error", (e: { code: number }) => resolve(e.code)));
    assert.equal(code, status.UNIMPLEMENTED);
  } finally {
    client.close();
  }
});
