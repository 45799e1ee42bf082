// Istio's CRD validation corpus (pkg/config/validation/testdata/crds, run by TestCRDs): every
// document of a `-valid` file must be accepted and every document of an `-invalid` file rejected.
// See crd-validation/README.md in the corpus for the file format.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeConfigText } from "../../src/config/decode.ts";
import { validateObject } from "../../src/config/index.ts";
import type { CaseResult, ConformanceCase, Corpus } from "./corpus.ts";

const CORPUS_FILE = /-(valid|invalid)\.yaml$/;

// The corpus splits on every line that starts with "---" (not only on YAML document markers).
const SEPARATOR_LINE = /^---.*$/m;

export const crdValidation: Corpus = {
  name: "crd-validation",
  cases(root) {
    const dir = join(root, "crd-validation");
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((file) => CORPUS_FILE.test(file))
      .sort()
      .flatMap((file) => {
        const expectValid = file.endsWith("-valid.yaml");
        const parts = readFileSync(join(dir, file), "utf8")
          .split(SEPARATOR_LINE)
          .filter((part) => part.trim() !== "");
        return parts.map(
          (part, index): ConformanceCase => ({
            id: `${file}#${index}`,
            run: () => checkDocument(part, `${file}#${index}`, expectValid),
          }),
        );
      });
  },
};

function checkDocument(text: string, id: string, expectValid: boolean): CaseResult {
  const decoded = decodeConfigText(text, id);
  if (decoded.length !== 1) return { pass: false, detail: `expected one document, decoded ${decoded.length}` };
  const [doc] = decoded;
  if (!doc.object) return { pass: false, detail: `cannot decode: ${doc.error}` };
  // `_err` is the corpus's note of the expected CRD error, not part of the object.
  const expectedError = doc.object._err;
  delete doc.object._err;

  const { errors } = validateObject(doc.object);
  const found = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
  if (expectValid) {
    return errors.length === 0 ? { pass: true, detail: "accepted" } : { pass: false, detail: `rejected: ${found}` };
  }
  return errors.length > 0
    ? { pass: true, detail: `rejected: ${found}` }
    : { pass: false, detail: `accepted, expected a rejection like ${JSON.stringify(expectedError ?? "")}` };
}
