// Istio's CRD validation corpus (pkg/config/validation/testdata/crds, run by TestCRDs): every
// document of a `-valid` file must be accepted and every document of an `-invalid` file rejected
// (case `<file>#<index>`). An `-invalid` document that names its expected error in `_err` gives a
// second case, `<file>#<index>/_err`: the rejection must contain that text, so a document rejected
// for another reason is not counted as a pass twice. See crd-validation/README.md in the corpus.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeConfigText } from "../../src/config/decode.ts";
import { type ConfigObject, validateObject } from "../../src/config/index.ts";
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
      .flatMap((file) =>
        readFileSync(join(dir, file), "utf8")
          .split(SEPARATOR_LINE)
          .filter((part) => part.trim() !== "")
          .flatMap((part, index) => documentCases(part, `${file}#${index}`, file.endsWith("-valid.yaml"))),
      );
  },
};

function documentCases(text: string, id: string, expectValid: boolean): ConformanceCase[] {
  const decoded = decodeConfigText(text, id);
  const object = decoded.length === 1 ? decoded[0].object : undefined;
  if (!object) {
    const why = decoded.length === 1 ? decoded[0].error : `expected one document, decoded ${decoded.length}`;
    return [{ id, run: () => ({ pass: false, detail: `cannot decode: ${why}` }) }];
  }
  // `_err` is the corpus's note of the expected CRD error, not part of the object.
  const { _err: expectedError, ...rest } = object;
  const candidate = rest as ConfigObject;
  const cases: ConformanceCase[] = [{ id, run: () => checkVerdict(candidate, expectValid) }];
  if (!expectValid && typeof expectedError === "string" && expectedError !== "") {
    cases.push({ id: `${id}/_err`, run: () => checkErrorText(candidate, expectedError) });
  }
  return cases;
}

function errorLines(obj: ConfigObject): string[] {
  return validateObject(obj).errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message));
}

function checkVerdict(obj: ConfigObject, expectValid: boolean): CaseResult {
  const errors = errorLines(obj);
  if (expectValid) {
    return errors.length === 0
      ? { pass: true, detail: "accepted" }
      : { pass: false, detail: `rejected: ${errors.join("; ")}` };
  }
  return errors.length > 0
    ? { pass: true, detail: `rejected: ${errors.join("; ")}` }
    : { pass: false, detail: "accepted, expected a rejection" };
}

function checkErrorText(obj: ConfigObject, expectedError: string): CaseResult {
  const errors = errorLines(obj);
  return errors.some((line) => line.includes(expectedError))
    ? { pass: true, detail: `rejected with ${JSON.stringify(expectedError)}` }
    : {
        pass: false,
        detail: `expected an error containing ${JSON.stringify(expectedError)}, got: ${errors.join("; ") || "none"}`,
      };
}
