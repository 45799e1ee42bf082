import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { KubeTestServer } from "../../../test/kube-apiserver/index.ts";
import { KubeApiError, KubeClient, loadKubeConfig } from "./client.ts";

let server: KubeTestServer;
let dir: string;
before(async () => {
  server = await KubeTestServer.start();
  dir = mkdtempSync(join(tmpdir(), "sluice-kubeconfig-"));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a --kubeconfig file gives the server address and the bearer token", async () => {
  const path = join(dir, "config");
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- name: test\n  cluster:\n    server: ${server.url}\n    insecure-skip-tls-verify: true`,
      "users:",
      "- name: sluice\n  user:\n    token: secret-token",
      "contexts:",
      "- name: test\n  context:\n    cluster: test\n    user: sluice",
      "current-context: test",
    ].join("\n"),
  );
  const client = new KubeClient(loadKubeConfig(path));
  const versions = (await client.request("GET", "/api")) as { versions: string[] };
  assert.deepEqual(versions.versions, ["v1"]);
  assert.equal(server.requests.at(-1)?.headers.authorization, "Bearer secret-token");
});

test("a non-2xx answer is a KubeApiError with the Status reason", async () => {
  const client = new KubeClient(server.kubeConfig());
  await assert.rejects(
    client.request("GET", "/api/v1/namespaces/none/services/missing"),
    (err: unknown) => err instanceof KubeApiError && err.code === 404 && err.reason === "NotFound",
  );
});
