// Generates manifests/crds/, the CustomResourceDefinitions `sluice install` applies: Istio's and the
// Gateway API's, one file per CRD, as the package's own copy. Run by hand when the CRDs change:
//   node --import tsx scripts/gen-crds.ts [crd-dir]   (default: ../shared/crds)
// Output is committed. The schemas' descriptions are dropped (documentation text is not ours to ship;
// `kubectl explain` and the printer columns then show no prose); everything the API server validates with stays.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, stringify } from "yaml";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const crdDir = process.argv[2] ?? join(repo, "../shared/crds");
const outDir = join(repo, "manifests/crds");

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A schema without its `description` keywords; the keys of `properties` are field names and stay. */
function withoutDescriptions(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (schema === null || typeof schema !== "object") return schema;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "description" && typeof value === "string") continue;
    if ((key === "properties" || key === "patternProperties") && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(Object.entries(value).map(([field, sub]) => [field, withoutDescriptions(sub)]));
    } else out[key] = withoutDescriptions(value);
  }
  return out;
}

interface Crd {
  kind: string;
  metadata: { name: string };
  spec: { versions: Json[] };
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
let count = 0;
for (const file of readdirSync(crdDir).sort()) {
  if (!file.endsWith(".yaml")) continue;
  for (const doc of parseAllDocuments(readFileSync(join(crdDir, file), "utf8"))) {
    const crd = doc.toJS() as Crd | null;
    if (crd?.kind !== "CustomResourceDefinition") continue;
    // A version holds no field named "description": only schemas and printer columns have them.
    crd.spec.versions = crd.spec.versions.map(withoutDescriptions);
    // <plural>.<group> → <group>_<plural>.yaml, the Gateway API's own file naming.
    const [plural, ...group] = crd.metadata.name.split(".");
    writeFileSync(join(outDir, `${group.join(".")}_${plural}.yaml`), stringify(crd, { lineWidth: 0 }));
    count++;
  }
}
process.stdout.write(`${count} CRDs written to ${outDir}\n`);
