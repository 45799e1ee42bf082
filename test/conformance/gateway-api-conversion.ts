// Istio's Gateway API conversion corpus (TestConvertResources, see gateway-api-conversion/README.md in
// the corpus): each case's input plus FIXTURES.yaml is converted, and the generated Istio config and the
// written statuses are compared with the goldens as parsed document lists (`<case>/config`, `<case>/status`).
// The Go file's code-asserted tests (CASES.yaml extraTests) are one case each, named after the test.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { parseAllDocuments } from "yaml";
import { decodeConfigText } from "../../src/config/decode.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import {
  type ConversionResult,
  convertResources,
  type RegistryService,
  staticServiceLookup,
} from "../../src/gatewayapi/index.ts";
import type { CaseResult, ConformanceCase, Corpus } from "./corpus.ts";

export const CORPUS_DIR = "gateway-api-conversion";

export interface CaseEntry {
  name: string;
  input: string;
  expected: { config: string; status: string };
}

interface RegistryServiceDocument {
  spec: {
    hostname: string;
    ports: { name?: string; port: number; protocol?: string }[];
    labels?: Record<string, string>;
    externalAddresses?: Record<string, string[]>;
    endpoints?: { servicePort: number; endpointPort: number }[];
  };
  metadata: { namespace: string };
}

export interface Fixtures {
  domainSuffix: string;
  alphaGatewayApi: boolean;
  objects: ConfigObject[];
  services: RegistryService[];
}

export function parseDocuments(text: string): unknown[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as unknown)
    .filter((value) => value !== null && value !== undefined);
}

export function readFixtures(dir: string): Fixtures {
  const docs = parseDocuments(readFileSync(join(dir, "FIXTURES.yaml"), "utf8")) as ConfigObject[];
  const settings = docs.find((d) => d.kind === "TestSettings")?.spec as {
    domainSuffix: string;
    features: Record<string, unknown>;
  };
  const services = docs
    .filter((d) => d.kind === "RegistryService")
    .map((d) => {
      const { spec, metadata } = d as unknown as RegistryServiceDocument;
      return {
        hostname: spec.hostname,
        namespace: metadata.namespace,
        ports: spec.ports,
        labels: spec.labels,
        externalAddresses: Object.values(spec.externalAddresses ?? {}).flat(),
        endpoints: spec.endpoints ?? [],
      };
    });
  const objects = docs.filter((d) => d.kind === "Service" || d.kind === "Secret" || d.kind === "ConfigMap");
  return {
    domainSuffix: settings.domainSuffix,
    alphaGatewayApi: settings.features.PILOT_ENABLE_ALPHA_GATEWAY_API === true,
    objects,
    services,
  };
}

// One Namespace per namespace the input uses, labelled istio.io/test-name-part (TestSettings).
export function namespacesOf(objects: readonly ConfigObject[]): ConfigObject[] {
  const names = [...new Set(objects.map((o) => o.metadata.namespace ?? ""))];
  return names.map((name) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "istio.io/test-name-part": name.split("-")[0] } },
  }));
}

// The goldens replace every transition time with "fake"; so does this comparison, on both sides.
export function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === "lastTransitionTime" ? "fake" : normalise(v)]),
    );
  }
  return value;
}

export function compareDocuments(actual: readonly unknown[], expected: readonly unknown[]): CaseResult {
  const got = normalise(actual) as unknown[];
  const want = normalise(expected) as unknown[];
  if (isDeepStrictEqual(got, want)) return { pass: true, detail: `${want.length} documents match` };
  const describe = (doc: unknown) => {
    const meta = (doc as ConfigObject | undefined)?.metadata;
    return doc ? `${(doc as ConfigObject).kind} ${meta?.namespace ?? ""}/${meta?.name ?? ""}` : "nothing";
  };
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (!isDeepStrictEqual(got[i], want[i])) {
      return {
        pass: false,
        detail: `${got.length} documents, expected ${want.length}; #${i}: got ${describe(got[i])}, expected ${describe(want[i])}: got ${JSON.stringify(got[i])} expected ${JSON.stringify(want[i])}`,
      };
    }
  }
  return { pass: false, detail: "documents differ" };
}

export function readInput(dir: string, input: string): ConfigObject[] {
  return decodeConfigText(readFileSync(join(dir, input), "utf8"), input).flatMap((d) => (d.object ? [d.object] : []));
}

/** Converts a case's objects with the fixtures (TestConvertResources' setup). */
export function runConversion(objects: readonly ConfigObject[], fixtures: Fixtures): ConversionResult {
  return convertResources(
    [...objects, ...fixtures.objects, ...namespacesOf(objects)],
    { domainSuffix: fixtures.domainSuffix, alphaGatewayApi: fixtures.alphaGatewayApi },
    staticServiceLookup(fixtures.services),
  );
}

interface ExtraTest {
  name: string;
  input?: string;
  objects?: ConfigObject[];
}

function check(failures: string[]): CaseResult {
  return failures.length === 0
    ? { pass: true, detail: "assertions hold" }
    : { pass: false, detail: failures.join("; ") };
}

// The code-asserted tests of the Go file (CASES.yaml extraTests), their assertions written out here.
const EXTRA_TESTS: Record<string, (dir: string, test: ExtraTest, fixtures: Fixtures) => CaseResult> = {
  // XBackend / XBackendTrafficPolicy not read; routes to an XBackend say why. Registry without endpoints.
  "xbackend-alpha-disabled": (dir, test, fixtures) => {
    const services = fixtures.services.map((s) => ({ ...s, endpoints: [] }));
    const result = runConversion(readInput(dir, test.input ?? ""), { ...fixtures, services, alphaGatewayApi: false });
    const failures: string[] = [];
    if (result.config.some((c) => c.kind === "DestinationRule")) failures.push("a DestinationRule was generated");
    if (result.statuses.some((s) => s.kind === "XBackend")) failures.push("an XBackend status was written");
    if (!JSON.stringify(result.statuses).includes("PILOT_ENABLE_ALPHA_GATEWAY_API")) {
      failures.push("no status mentions PILOT_ENABLE_ALPHA_GATEWAY_API");
    }
    return check(failures);
  },
  // A ListenerSet's live status for a listener its spec no longer has is dropped. No fixtures.
  "listenerset-status-prunes-removed-listeners": (_dir, test) => {
    const empty: Fixtures = { domainSuffix: "domain.suffix", alphaGatewayApi: true, objects: [], services: [] };
    const result = runConversion(test.objects ?? [], empty);
    const set = result.statuses.find((s) => s.kind === "ListenerSet" && s.metadata.name === "set");
    const names = (set?.status as { listeners?: { name: string }[] } | undefined)?.listeners?.map((l) => l.name);
    return check(
      isDeepStrictEqual(names, ["a", "b"]) ? [] : [`listeners ${JSON.stringify(names)}, expected ["a","b"]`],
    );
  },
};

export const gatewayApiConversion: Corpus = {
  name: "gateway-api-conversion",
  cases(root) {
    const dir = join(root, CORPUS_DIR);
    if (!existsSync(join(dir, "CASES.yaml"))) return [];
    const { cases, extraTests } = parseDocuments(readFileSync(join(dir, "CASES.yaml"), "utf8"))[0] as {
      cases: CaseEntry[];
      extraTests?: ExtraTest[];
    };
    let fixtures: Fixtures | undefined;
    const loadFixtures = () => {
      fixtures ??= readFixtures(dir);
      return fixtures;
    };
    const extra = (extraTests ?? [])
      .filter((t) => EXTRA_TESTS[t.name] && (t.input === undefined || existsSync(join(dir, t.input))))
      .map((t): ConformanceCase => ({ id: t.name, run: () => EXTRA_TESTS[t.name](dir, t, loadFixtures()) }));
    const golden = cases
      .filter((c) => existsSync(join(dir, c.input)))
      .flatMap((c): ConformanceCase[] => {
        let result: ConversionResult | undefined;
        const converted = () => {
          result ??= runConversion(readInput(dir, c.input), loadFixtures());
          return result;
        };
        const expected = (file: string) => parseDocuments(readFileSync(join(dir, file), "utf8"));
        return [
          { id: `${c.name}/config`, run: () => compareDocuments(converted().config, expected(c.expected.config)) },
          { id: `${c.name}/status`, run: () => compareDocuments(converted().statuses, expected(c.expected.status)) },
        ];
      });
    return [...golden, ...extra];
  },
};
