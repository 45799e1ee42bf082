// `--suite micro --against istiod`: Istio's own per-operation benchmarks (pilot/pkg/xds/bench_test.go)
// from the istio module the istiod peer is built from, run on this machine in the same session, beside
// Sluice's benchmark of the same case. The Go test binary is built once into the peers cache
// (`go test -c`, a few minutes the first time) and run from the module's pilot/pkg/xds folder, where
// its testdata templates are.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { peerDir, peerProgram } from "../test/peers/paths.ts";
import type { FigureRecord } from "./load/against-istiod.ts";
import type { BenchResult } from "./run.ts";

/** One Go benchmark's result. */
interface GoResult {
  nsPerOp: number;
}

/** The Go benchmark of the same case as one of Sluice's micro benchmarks, by Sluice's name. */
function goNameOf(name: string): string | undefined {
  const template =
    /^templates: ([\w-]+), \d+ services, (push-context build|CDS generation|LDS generation|RDS generation) /.exec(name);
  if (template) {
    const [, which, what] = template;
    const bench = {
      "push-context build": "InitPushContext",
      "CDS generation": "ClusterGeneration",
      "LDS generation": "ListenerGeneration",
      "RDS generation": "RouteGeneration",
    }[what];
    return `Benchmark${bench}/${which}`;
  }
  // Not EndpointGeneration: it passes its EDS generator a push request that the generator skips (not
  // full, nothing updated), so it times building nothing (0.5–20 µs whatever the endpoints).
  // Go names the second of two cases called "secrets" secrets#01.
  const sds = /^SDS generation, (\d+) secrets \(router\)$/.exec(name);
  if (sds) return sds[1] === "10" ? "BenchmarkSecretGeneration/secrets" : "BenchmarkSecretGeneration/secrets#01";
  return undefined;
}

/** The istio module's folder in Go's module cache (downloaded if missing). */
function istioModuleDir(version: string): string {
  const out = execFileSync("go", ["mod", "download", "-json", `istio.io/istio@${version}`], {
    encoding: "utf8",
    env: { ...process.env, GOTOOLCHAIN: "local" },
  });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

/** Builds (once) and runs Istio's xDS benchmarks matching `names`; results by benchmark name. */
function runGoBenchmarks(names: readonly string[], benchtimeMs: number): Map<string, GoResult> {
  const istiod = peerProgram("istiod");
  const moduleDir = istioModuleDir(istiod.version);
  const dir = join(peerDir(istiod), "..", `istio-xds-bench-${istiod.version}`);
  const binary = join(dir, "xds.test");
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    console.log(`micro against istiod: building Istio's xDS benchmarks into ${binary} (once)`);
    execFileSync("go", ["test", "-c", "-o", binary, "./pilot/pkg/xds/"], {
      cwd: moduleDir,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, GOTOOLCHAIN: "local", CGO_ENABLED: "0" },
    });
  }
  // Top-level names, each anchored: a sub-benchmark regexp applies per level (Go's -bench syntax).
  const tops = [...new Set(names.map((n) => n.split("/")[0]))];
  const out = execFileSync(
    binary,
    ["-test.run", "^$", "-test.bench", `^(${tops.join("|")})$`, "-test.benchtime", `${benchtimeMs / 1000}s`],
    { cwd: join(moduleDir, "pilot/pkg/xds"), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const results = new Map<string, GoResult>();
  for (const line of out.split("\n")) {
    // "BenchmarkClusterGeneration/http-2   712   1678318 ns/op   98.9 kb/msg ..."; -2 is GOMAXPROCS.
    const m = /^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op/.exec(line);
    if (m) results.set(m[1], { nsPerOp: Number(m[2]) });
  }
  return results;
}

/** Sluice's micro results beside Go's for every case both have, as records (µs per operation). */
export function microAgainstIstiod(results: readonly BenchResult[], benchtimeMs: number): FigureRecord[] {
  const paired = results.flatMap((r) => {
    const go = goNameOf(r.name);
    return go ? [{ r, go }] : [];
  });
  const goResults = runGoBenchmarks(
    paired.map((p) => p.go),
    benchtimeMs,
  );
  return paired.flatMap(({ r, go }) => {
    const istiod = goResults.get(go);
    if (!istiod) return [];
    const istiodUs = istiod.nsPerOp / 1000;
    return [
      {
        mesh: go.replace(/^Benchmark/, ""),
        mode: "micro",
        sidecars: 1,
        figure: `${r.name} (µs)`,
        sluiced: r.medianUs,
        istiod: istiodUs,
        ratio: r.medianUs / istiodUs,
      },
    ];
  });
}
