// Istio's analyzer test table (pkg/config/analysis/analyzers/analyzers_test.go, transcribed in
// analysis/EXPECTED.yaml): each case runs one analyzer over its input files, and the multiset of
// (message code, resource) it reports must equal the expected one exactly.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { findAnalyzer } from "../../src/analysis/registry.ts";
import { runAnalysis } from "../../src/analysis/run.ts";
import { decodeConfigText } from "../../src/config/decode.ts";
import { loadMeshConfig, loadMeshNetworks } from "../../src/config/index.ts";
import type { CaseResult, ConformanceCase, Corpus } from "./corpus.ts";

interface ExpectedMessage {
  code: string;
  resource: string;
}

interface AnalyzerCase {
  index: number;
  name: string;
  inputFiles: string[];
  /** Multi-cluster cases: cluster name → its input files (instead of inputFiles). */
  clusters?: Record<string, string[]>;
  meshConfigFile?: string;
  meshNetworksFile?: string;
  analyzer: { name: string };
  expected: ExpectedMessage[];
}

export const analysis: Corpus = {
  name: "analysis",
  cases(root) {
    const dir = join(root, "analysis");
    const expectedFile = join(dir, "EXPECTED.yaml");
    if (!existsSync(expectedFile)) return [];
    const table = parse(readFileSync(expectedFile, "utf8")) as {
      cases: AnalyzerCase[];
      multiClusterCases?: Omit<AnalyzerCase, "index" | "inputFiles">[];
    };
    const cases = table.cases.map(
      (c): ConformanceCase => ({
        id: `${String(c.index).padStart(3, "0")} ${c.analyzer.name} ${c.name}`,
        run: () => runCase(join(dir, "testdata"), c),
      }),
    );
    const multiCluster = (table.multiClusterCases ?? []).map(
      (c): ConformanceCase => ({
        id: `multicluster ${c.analyzer.name} ${c.name}`,
        run: () => runCase(join(dir, "testdata"), { ...c, index: -1, inputFiles: [] }),
      }),
    );
    return [...cases, ...multiCluster];
  },
};

function runCase(testdata: string, c: AnalyzerCase): CaseResult {
  const analyzer = findAnalyzer(c.analyzer.name);
  if (!analyzer) return { pass: false, detail: `analyzer ${c.analyzer.name} not implemented` };
  const read = (file: string) => readFileSync(join(testdata, file), "utf8");
  const decode = (file: string, cluster?: string) =>
    decodeConfigText(read(file), file).flatMap((doc) =>
      doc.object ? [{ object: doc.object, origin: { ...doc.position, cluster } }] : [],
    );
  const inputs = c.clusters
    ? Object.entries(c.clusters).flatMap(([cluster, files]) => files.flatMap((file) => decode(file, cluster)))
    : c.inputFiles.flatMap((file) => decode(file));
  const messages = runAnalysis(inputs, {
    analyzers: [analyzer],
    mesh: loadMeshConfig(c.meshConfigFile ? read(c.meshConfigFile) : undefined).mesh,
    meshNetworks: c.meshNetworksFile ? loadMeshNetworks(read(c.meshNetworksFile)) : undefined,
    namespace: "",
    onlyInputKinds: true,
  });
  const got = messages.map((m) => `${m.type.code} ${m.resource?.friendlyName ?? ""}`).sort();
  const want = c.expected.map((e) => `${e.code} ${e.resource}`).sort();
  const same = got.length === want.length && got.every((g, i) => g === want[i]);
  return same
    ? { pass: true, detail: `${got.length} messages` }
    : { pass: false, detail: `want [${want.join(", ")}], got [${got.join(", ")}]` };
}
