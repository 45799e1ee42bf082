// Istio's AuthorizationPolicy → Envoy RBAC / ext_authz corpus (pilot/pkg/security/authz/builder,
// builder_test.go), as CASES.yaml in the corpus lists it: each case builds the filters of the
// workload `app: httpbin, version: v1` in namespace foo and compares them, in order, with the
// golden files by protobuf-JSON equality. HTTP cases run twice (`http/<case>` and
// `http-extended/<case>`, against the `extended-` copies); TCP cases once (`tcp/<case>`). A case
// whose files are absent is left out. See authz-rbac/README.md in the corpus.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type DescMessage, fromJson, type JsonValue, type MessageShape, toJson } from "@bufbuild/protobuf";
import { parse } from "yaml";
import { hcm, listener, registry } from "../../src/api/index.ts";
import { decodeConfigText } from "../../src/config/decode.ts";
import { type ConfigObject, loadMeshConfig } from "../../src/config/index.ts";
import type { AuthorizationPolicySpec } from "../../src/config/types/index.ts";
import {
  type AuthzBuildOptions,
  buildHttpAuthzFilters,
  buildTcpAuthzFilters,
  selectPolicies,
  trustDomainBundle,
} from "../../src/networking/authz/index.ts";
import type { CaseResult, ConformanceCase, Corpus } from "./corpus.ts";

interface ExpectedFile {
  file: string;
}

interface CaseEntry {
  name: string;
  input: string;
  meshConfig?: string;
  trustDomain?: string;
  trustDomainAliases?: string[];
  expected: ExpectedFile[];
}

interface Pass {
  name: string;
  expectedPrefix: string;
}

interface CaseTable {
  defaults: {
    proxy: { metadataNamespace: string; labels: Record<string, string> };
    rootNamespace: string;
    registry: { hostname: string; namespace: string }[];
  };
  meshConfigs: Record<string, unknown>;
  http: { passes: Pass[]; cases: CaseEntry[] };
  tcp: { passes: Pass[]; cases: CaseEntry[] };
}

export const authzRbac: Corpus = {
  name: "authz-rbac",
  cases(root) {
    const dir = join(root, "authz-rbac");
    const casesFile = join(dir, "CASES.yaml");
    if (!existsSync(casesFile)) return [];
    const table = parse(readFileSync(casesFile, "utf8")) as CaseTable;
    return [...chainCases(dir, table, table.http, "http", false), ...chainCases(dir, table, table.tcp, "tcp", true)];
  },
};

function chainCases(
  dir: string,
  table: CaseTable,
  chain: CaseTable["http"],
  chainName: string,
  forTcp: boolean,
): ConformanceCase[] {
  return chain.passes.flatMap((pass) => {
    const idPrefix = pass.expectedPrefix === "" ? chainName : `${chainName}-${pass.name}`;
    return chain.cases.flatMap((entry) => {
      const expected = entry.expected.map(({ file }) => expectedPath(dir, file, pass.expectedPrefix));
      if (![join(dir, entry.input), ...expected].every((path) => existsSync(path))) return [];
      return [{ id: `${idPrefix}/${entry.name}`, run: () => runCase(dir, table, entry, expected, forTcp) }];
    });
  });
}

/** `http/x-out.yaml` with prefix `extended-` → `http/extended-x-out.yaml`. */
function expectedPath(dir: string, file: string, prefix: string): string {
  const slash = file.lastIndexOf("/");
  return join(dir, file.slice(0, slash + 1) + prefix + file.slice(slash + 1));
}

function runCase(dir: string, table: CaseTable, entry: CaseEntry, expected: string[], forTcp: boolean): CaseResult {
  const policies = decodeConfigText(readFileSync(join(dir, entry.input), "utf8"), entry.input).map((doc) => {
    if (!doc.object) throw new Error(`cannot decode ${entry.input}#${doc.position.index}: ${doc.error}`);
    return doc.object as ConfigObject<AuthorizationPolicySpec>;
  });
  const { proxy, rootNamespace } = table.defaults;
  const selected = selectPolicies(
    policies,
    { namespace: proxy.metadataNamespace, labels: proxy.labels },
    rootNamespace,
  );
  const options: AuthzBuildOptions = {
    trustDomains: entry.trustDomain ? trustDomainBundle(entry.trustDomain, entry.trustDomainAliases) : [],
  };
  if (entry.meshConfig) {
    const { mesh } = loadMeshConfig(JSON.stringify(table.meshConfigs[entry.meshConfig]));
    options.custom = { extensionProviders: mesh.extensionProviders ?? [], services: table.defaults.registry };
  }
  const got = forTcp
    ? buildTcpAuthzFilters(selected, options).filters.map((f) => canonicalJson(listener.FilterSchema, f))
    : buildHttpAuthzFilters(selected, options).filters.map((f) => canonicalJson(hcm.HttpFilterSchema, f));
  const schema = forTcp ? listener.FilterSchema : hcm.HttpFilterSchema;
  const want = expected.map((path) =>
    canonicalJson(schema, fromJson(schema, parse(readFileSync(path, "utf8")), { registry })),
  );
  if (got.length !== want.length) {
    return { pass: false, detail: `built ${got.length} filters, expected ${want.length}: ${got.join(" | ")}` };
  }
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) return { pass: false, detail: `filter ${i} differs:\n got: ${got[i]}\nwant: ${want[i]}` };
  }
  return { pass: true, detail: `${got.length} filters equal the goldens` };
}

/** Protobuf JSON (default values omitted) with object keys sorted, so map order does not count. */
export function canonicalJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  return JSON.stringify(sortKeys(toJson(schema, message, { registry })));
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}
