// A proxyless gRPC client of the echo service: grpc-js with the xDS resolver (grpc-js-xds) reads the
// bootstrap file named by GRPC_XDS_BOOTSTRAP and gets its routes, clusters and endpoints from Sluice,
// so the VirtualService's split happens inside the client, call by call; no proxy is involved.
// It prints, as one JSON line, how many calls each version answered (failures as "error:<CODE>").
//
//   GRPC_XDS_BOOTSTRAP=client.json node --import tsx examples/proxyless/echo-client.ts --calls 1000
//
// Without --calls it reads call counts from standard input, one per line, and answers each line with
// its tally (this is how `npm run demo` drives it, keeping one client alive across a config change).
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Client, credentials, type ServiceError, status } from "@grpc/grpc-js";
import { register } from "@grpc/grpc-js-xds";
import { ECHO_METHOD, ECHO_TARGET } from "./echo.ts";

/** Calls in flight at once. */
const CONCURRENCY = 20;
const CALL_TIMEOUT_MS = 5_000;

const { values } = parseArgs({
  options: { calls: { type: "string" }, target: { type: "string", default: ECHO_TARGET } },
});

register();
const client = new Client(values.target, credentials.createInsecure());

/** One call: the version that answered, or `error:<CODE>`. */
function callOnce(): Promise<string> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      ECHO_METHOD.path,
      ECHO_METHOD.requestSerialize,
      ECHO_METHOD.responseDeserialize,
      Buffer.alloc(0),
      { deadline: Date.now() + CALL_TIMEOUT_MS },
      (err: ServiceError | null, answer?: Buffer) => resolve(err ? `error:${status[err.code]}` : String(answer)),
    );
  });
}

/** `n` calls, CONCURRENCY at a time: how many ended each way. */
async function tally(n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let started = 0;
  const worker = async () => {
    while (started < n) {
      started++;
      const result = await callOnce();
      counts[result] = (counts[result] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, worker));
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

function parseCount(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`not a number of calls: ${text}`);
  return n;
}

if (values.calls !== undefined) {
  process.stdout.write(`${JSON.stringify(await tally(parseCount(values.calls)))}\n`);
} else {
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === "") continue;
    process.stdout.write(`${JSON.stringify(await tally(parseCount(line.trim())))}\n`);
  }
}
client.close();
// The xDS client keeps its stream to the control plane open; the work is done.
process.exit(0);
