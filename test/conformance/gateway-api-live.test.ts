// The live (staged, incremental) conversion gives what the batch conversion gives, case by case over
// Istio's gateway-api-conversion corpus: built from full collections, and built up one object at a time
// (last object first), which exercises every dependency a stage records.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { ConfigObject, gatewayapi, ServiceEntry } from "../../src/config/index.ts";
import {
  type ConversionResult,
  type LiveConversionInputs,
  liveConversion,
  type RegistryService,
} from "../../src/gatewayapi/index.ts";
import { type Collection, StaticCollection } from "../../src/krt/index.ts";
import { conformanceRoot } from "./corpus.ts";
import {
  type CaseEntry,
  CORPUS_DIR,
  type Fixtures,
  namespacesOf,
  normalise,
  parseDocuments,
  readFixtures,
  readInput,
  runConversion,
} from "./gateway-api-conversion.ts";

// The kinds the config store holds (the X* kinds and InferencePools with their istiod flags on).
const LIVE_KINDS = new Set([
  "GatewayClass",
  "Gateway",
  "ListenerSet",
  "ReferenceGrant",
  "BackendTLSPolicy",
  "XBackend",
  "XBackendTrafficPolicy",
  "InferencePool",
  "HTTPRoute",
  "GRPCRoute",
  "TCPRoute",
  "TLSRoute",
  "Service",
  "Secret",
  "ConfigMap",
  "Namespace",
  "ServiceEntry",
]);

type Collections = Record<string, StaticCollection<ConfigObject>>;

/** A kind's collection as its typed objects: each collection only ever gets objects of its own kind. */
const typed = <T extends ConfigObject>(collection: StaticCollection<ConfigObject>) =>
  collection as unknown as Collection<T>;

function liveInputs(services: readonly RegistryService[]): { inputs: LiveConversionInputs; byKind: Collections } {
  const byKind: Collections = Object.fromEntries(
    [...LIVE_KINDS].map((kind) => [kind, new StaticCollection<ConfigObject>()]),
  );
  const registry = new StaticCollection<RegistryService>(services, { keyOf: (s) => `${s.namespace}/${s.hostname}` });
  return {
    byKind,
    inputs: {
      gatewayApi: {
        gatewayClasses: typed<gatewayapi.GatewayClass>(byKind.GatewayClass),
        gateways: typed<gatewayapi.Gateway>(byKind.Gateway),
        listenerSets: byKind.ListenerSet,
        referenceGrants: byKind.ReferenceGrant,
        backendTLSPolicies: byKind.BackendTLSPolicy,
        xBackends: typed<gatewayapi.XBackend>(byKind.XBackend),
        xBackendTrafficPolicies: typed<gatewayapi.XBackendTrafficPolicy>(byKind.XBackendTrafficPolicy),
        inferencePools: byKind.InferencePool,
        routes: [byKind.HTTPRoute, byKind.GRPCRoute, byKind.TCPRoute, byKind.TLSRoute],
      },
      cluster: {
        services: byKind.Service,
        secrets: byKind.Secret,
        configMaps: byKind.ConfigMap,
        namespaces: byKind.Namespace,
        serviceEntries: typed<ServiceEntry>(byKind.ServiceEntry),
      },
      servicesByHostname: registry.addIndex("by-hostname", (s) => [s.hostname]),
    },
  };
}

function convertLive(
  objects: readonly ConfigObject[],
  fixtures: Fixtures,
  oneByOne: boolean,
): ConversionResult | undefined {
  const { inputs, byKind } = liveInputs(fixtures.services);
  const all = [...objects, ...fixtures.objects, ...namespacesOf(objects)];
  if (!oneByOne) for (const obj of all) byKind[obj.kind].upsert(obj);
  const conversion = liveConversion(inputs, {
    domainSuffix: fixtures.domainSuffix,
    alphaGatewayApi: fixtures.alphaGatewayApi,
  });
  if (oneByOne) for (const obj of [...all].reverse()) byKind[obj.kind].upsert(obj);
  return conversion.get();
}

const dir = join(conformanceRoot(), CORPUS_DIR);
const present = existsSync(join(dir, "CASES.yaml"));

describe("live Gateway API conversion against the batch one, over Istio's corpus", {
  skip: !present && "corpus absent",
}, () => {
  const { cases } = (present ? parseDocuments(readFileSync(join(dir, "CASES.yaml"), "utf8"))[0] : { cases: [] }) as {
    cases: CaseEntry[];
  };
  const fixtures = present ? readFixtures(dir) : undefined;
  let compared = 0;
  for (const entry of cases) {
    if (!existsSync(join(dir, entry.input)) || !fixtures) continue;
    const objects = readInput(dir, entry.input);
    if (!objects.every((o) => LIVE_KINDS.has(o.kind))) continue;
    test(entry.name, () => {
      const batch = normalise(runConversion(objects, fixtures));
      assert.deepEqual(normalise(convertLive(objects, fixtures, false)), batch, "built from full collections");
      assert.deepEqual(normalise(convertLive(objects, fixtures, true)), batch, "built one object at a time");
      compared += 1;
    });
  }
  test("summary", (t) => {
    t.diagnostic(`${compared} cases converted alike live and in batch`);
    assert.ok(compared > 30);
  });
});
