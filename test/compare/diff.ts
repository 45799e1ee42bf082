// Normalizes what two control planes served one proxy and compares it resource by resource, with a
// field-path diff for each resource that differs.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Snapshot } from "./collect.ts";

/** One resource of one proxy, as both control planes served it. */
export interface ResourceComparison {
  /** `<proxy> <TYPE> <name>`: the id the baseline records. */
  id: string;
  proxy: string;
  type: string;
  name: string;
  outcome: "identical" | "differs" | "only-istiod" | "only-sluice";
  /** Field paths that differ, each `path: istiod … | sluice …` (differs only). */
  paths: string[];
  istiod?: JsonValue;
  sluice?: JsonValue;
}

/**
 * Removes what must differ between two control planes: nothing inside xDS resources does today (the
 * version and nonce are outside them, secrets are only named). The hook stays so that a needed
 * normalization is one named rule here, not a silent mismatch.
 */
export function normalize(_type: string, resource: JsonValue): JsonValue {
  return resource;
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);

const show = (v: JsonValue | undefined) => {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
};

/** Every path at which `a` and `b` differ (`.field`, `[index]`); empty when they are equal. */
export function diffPaths(a: JsonValue | undefined, b: JsonValue | undefined, path = ""): string[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => diffPaths(a[k], b[k], `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: string[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) out.push(...diffPaths(a[i], b[i], `${path}[${i}]`));
    return out;
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  return [`${path || "."}: istiod ${show(a)} | sluice ${show(b)}`];
}

/** Compares what istiod and Sluice served one proxy, every resource of either. */
export function compareSnapshots(proxy: string, istiod: Snapshot, sluice: Snapshot): ResourceComparison[] {
  const out: ResourceComparison[] = [];
  const types = [...new Set([...istiod.keys(), ...sluice.keys()])].sort();
  for (const type of types) {
    const ours = sluice.get(type) ?? new Map();
    const theirs = istiod.get(type) ?? new Map();
    const names = [...new Set([...theirs.keys(), ...ours.keys()])].sort();
    for (const name of names) {
      const a = theirs.has(name) ? normalize(type, theirs.get(name) as JsonValue) : undefined;
      const b = ours.has(name) ? normalize(type, ours.get(name) as JsonValue) : undefined;
      const id = `${proxy} ${type} ${name}`;
      const base = { id, proxy, type, name, istiod: a, sluice: b };
      if (a === undefined) out.push({ ...base, outcome: "only-sluice", paths: [] });
      else if (b === undefined) out.push({ ...base, outcome: "only-istiod", paths: [] });
      else {
        const paths = diffPaths(a, b);
        out.push({ ...base, outcome: paths.length === 0 ? "identical" : "differs", paths });
      }
    }
  }
  return out;
}
