import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { waitUntilReady } from "./wait.ts";

async function server(statusFor: (n: number) => number) {
  let requests = 0;
  const s = createServer((_req, res) => {
    requests++;
    res.writeHead(statusFor(requests));
    res.end();
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/healthz/ready`, requests: () => requests, close: () => s.close() };
}

test("wait polls until the URL answers 200", async () => {
  const s = await server((n) => (n < 3 ? 503 : 200));
  try {
    await waitUntilReady({ url: s.url, timeoutMs: 30_000, requestTimeoutMs: 5_000, periodMs: 10 });
    assert.equal(s.requests(), 3);
  } finally {
    s.close();
  }
});

test("wait gives up after its timeout with the last error", async () => {
  const s = await server(() => 503);
  try {
    await assert.rejects(
      waitUntilReady({ url: s.url, timeoutMs: 200, requestTimeoutMs: 5_000, periodMs: 20 }),
      /^Error: timeout waiting for Envoy proxy to become ready. Last error: HTTP status code 503$/,
    );
    assert.ok(s.requests() >= 1);
  } finally {
    s.close();
  }
});
