// Istio's Kubernetes Ingress conversion goldens (TestGoldenConversion; see ingress-conversion/README.md
// in the corpus): each case's objects converted with domain suffix `mydomain` and ingressControllerMode
// DEFAULT, the generated Gateways and VirtualServices sorted by name and compared with the golden's
// documents, parsed (`<case>`).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type ConfigObject, loadMeshConfig } from "../../src/config/index.ts";
import { convertIngresses } from "../../src/ingress/index.ts";
import { compareStrings } from "../../src/util/index.ts";
import type { Corpus } from "./corpus.ts";
import { compareDocuments, parseDocuments } from "./gateway-api-conversion.ts";

export const CORPUS_DIR = "ingress-conversion";

const MESH = loadMeshConfig("ingressControllerMode: DEFAULT\n").mesh;

export const ingressConversion: Corpus = {
  name: CORPUS_DIR,
  cases(root) {
    const dir = join(root, CORPUS_DIR);
    if (!existsSync(dir)) return [];
    const names = readdirSync(dir)
      .filter((f) => f.endsWith(".yaml"))
      .map((f) => f.slice(0, -".yaml".length))
      .sort();
    return names.map((name) => ({
      id: name,
      run() {
        const objects = parseDocuments(readFileSync(join(dir, `${name}.yaml`), "utf8")) as ConfigObject[];
        const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
        const generated = convertIngresses({
          ingresses: ofKind("Ingress"),
          ingressClasses: ofKind("IngressClass"),
          service: (namespace, name) =>
            ofKind("Service").find((s) => s.metadata.namespace === namespace && s.metadata.name === name),
          mesh: MESH,
          domainSuffix: "mydomain",
        });
        // Sorted by name, as the Go test lists them.
        const sorted = [...generated].sort((a, b) => compareStrings(a.metadata.name ?? "", b.metadata.name ?? ""));
        const expected = parseDocuments(readFileSync(join(dir, `${name}.yaml.golden`), "utf8"));
        return compareDocuments(sorted, expected);
      },
    }));
  },
};
