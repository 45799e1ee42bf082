// Proxyless convergence: the time from writing a VirtualService file to the first RPC a real
// grpc-js-xds client routes by the new rule, through sluiced's pieces in one process (the file
// source with its default debounce, the push pipeline with sluiced's default 100 ms debounce, the
// grpc generator, the client's LDS/RDS/CDS/EDS). Each run flips all traffic between two subsets.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { stringify } from "yaml";
import { FileSource } from "../src/sources/index.ts";
import { outcome, startBackend } from "../test/proxyless/echo.ts";
import {
  ControlPlane,
  destinationRule,
  ECHO_HOST,
  echoService,
  useControlPlane,
  VERSION_SUBSETS,
  virtualService,
  xdsClient,
} from "../test/proxyless/mesh.ts";
import { timing } from "./measure.ts";
import type { BenchResult } from "./run.ts";

export async function benchProxyless(runs: number): Promise<BenchResult> {
  const backends = [await startBackend("v1"), await startBackend("v2")];
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-proxyless-"));
  const routeFile = join(dir, "virtualservice.yaml");
  const writeRoute = (subset: string) =>
    writeFileSync(routeFile, stringify(virtualService([{ route: [{ destination: { host: ECHO_HOST, subset } }] }])));
  const [v1, v2] = backends;
  writeFileSync(
    join(dir, "service.yaml"),
    stringify(
      echoService([
        { backend: v1, labels: { version: "v1" } },
        { backend: v2, labels: { version: "v2" } },
      ]),
    ),
  );
  writeFileSync(join(dir, "destinationrule.yaml"), stringify(destinationRule({ subsets: VERSION_SUBSETS })));
  writeRoute("v1");
  const cp = await ControlPlane.start([], { afterMs: 100, maxMs: 10_000, edsDebounce: true });
  const files = new FileSource({ dir, store: cp.store });
  await files.start();
  useControlPlane(cp);
  const client = xdsClient();
  const samples: number[] = [];
  try {
    /** Calls until one is answered by `subset`; the time of that answer. */
    const firstAnsweredBy = async (subset: string) => {
      for (;;) if ((await outcome(client)) === subset) return performance.now();
    };
    await firstAnsweredBy("v1");
    for (let run = 0; run < runs; run++) {
      const subset = run % 2 === 0 ? "v2" : "v1";
      const start = performance.now();
      writeRoute(subset);
      samples.push(((await firstAnsweredBy(subset)) - start) * 1000);
    }
  } finally {
    client.close();
    await files.stop();
    await cp.stop();
    for (const b of backends) b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return { name: "proxyless: VirtualService file write → first grpc-js-xds RPC on the new route", ...timing(samples) };
}
