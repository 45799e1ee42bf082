// Decoding config files: multi-document YAML (and JSON, which is YAML) into config objects, each with
// the file and line it came from. A broken document becomes one error and never hides its neighbours.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
  Scalar,
  type ScalarTag,
  visit,
} from "yaml";
import { CONFIG_FILE_EXTENSIONS, STDIN_PATH } from "./decode-paths.ts";
import type { ConfigObject, SourcePosition } from "./model.ts";

/** One document of a config file: either the object it holds or why it could not be read. */
export interface DecodedDocument {
  position: SourcePosition;
  object?: ConfigObject;
  error?: string;
}

// A line that starts a new YAML document. Splitting on it before parsing keeps a syntax error (an
// unclosed quote, say) from running into the next document; YAML itself ends scalars at such a line.
const DOCUMENT_START = /^---(\s|$)/;

// Kubernetes reads YAML with Go's YAML 1.1 rules (kubectl, sigs.k8s.io/yaml): y/yes/on and n/no/off
// are booleans, and a leading zero makes an integer octal. Reading them the same way means `value: on`
// cannot be the string "on" here and true in the cluster. Quoted scalars stay strings.
const GO_YAML_SCALARS: ScalarTag[] = [
  { tag: "tag:yaml.org,2002:bool", default: true, test: /^(?:y|Y|yes|Yes|YES|on|On|ON)$/, resolve: () => true },
  { tag: "tag:yaml.org,2002:bool", default: true, test: /^(?:n|N|no|No|NO|off|Off|OFF)$/, resolve: () => false },
  { tag: "tag:yaml.org,2002:int", default: true, test: /^[-+]?0[0-7]+$/, resolve: (text) => parseInt(text, 8) },
];

// Aliases can expand exponentially ("billion laughs"); a config file has no reason to use many.
const MAX_ALIAS_COUNT = 100;

/** Decodes every non-empty document of `text`; `file` is only used for positions. */
export function decodeConfigText(text: string, file: string): DecodedDocument[] {
  const decoded: DecodedDocument[] = [];
  const add = (line: number, result: { object: ConfigObject } | { error: string }) =>
    decoded.push({ position: { file, index: decoded.length, line }, ...result });

  for (const part of splitDocuments(text)) {
    const lineCounter = new LineCounter();
    const lineOf = (offset: number) => part.firstLine - 1 + Math.max(lineCounter.linePos(offset).line, 1);
    const docs = parseAllDocuments(part.text, {
      lineCounter,
      prettyErrors: false,
      merge: true,
      customTags: (coreTags) => [...GO_YAML_SCALARS, ...coreTags],
    });
    for (const doc of docs) {
      const syntaxError = doc.errors[0];
      if (syntaxError) {
        // An unclosed quote or bracket is found at the end of the input; report the document's last line
        // rather than the line after it, which belongs to the next document.
        const offset = Math.min(syntaxError.pos[0], part.text.trimEnd().length);
        add(lineOf(offset), { error: `syntax error: ${syntaxError.message}` });
        continue;
      }
      const contents = doc.contents;
      if (contents === null) continue;
      const docLine = lineOf(contents.range?.[0] ?? 0);
      keepColonScalarsInFlowSequences(doc, part.text);
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      } catch (err) {
        add(docLine, { error: `syntax error: ${(err as Error).message}` });
        continue;
      }
      // A document of only comments (or an explicit null, or {}) holds nothing to check, as in istioctl.
      if (value === null || value === undefined || isEmptyMapping(value)) continue;
      if (isList(value)) {
        const itemNodes = listItemNodes(doc);
        value.items.forEach((item, i) => {
          const itemLine = lineOf(itemNodes[i]?.range?.[0] ?? contents.range?.[0] ?? 0);
          const shaped = toConfigObject(item);
          add(itemLine, "error" in shaped ? { error: `items[${i}]: ${shaped.error}` } : shaped);
        });
        continue;
      }
      add(docLine, toConfigObject(value));
    }
  }
  return decoded;
}

/** Reads files and directories (recursively: .yaml, .yml, .json, sorted) and decodes every document. */
export function readConfigPaths(paths: string[]): DecodedDocument[] {
  return paths.flatMap(configFiles).flatMap((file) => decodeConfigText(readConfigFile(file), file));
}

/** The files a path stands for: itself, or the config files under a directory in sorted order. */
export function configFiles(path: string): string[] {
  if (path === STDIN_PATH || !statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: "utf8" })
    .filter((relative) => CONFIG_FILE_EXTENSIONS.includes(extname(relative).toLowerCase()))
    .sort()
    .map((relative) => join(path, relative))
    .filter((file) => statSync(file).isFile());
}

function readConfigFile(file: string): string {
  return readFileSync(file === STDIN_PATH ? 0 : file, "utf8");
}

interface DocumentText {
  text: string;
  /** 1-based line of the part's first line in the whole file. */
  firstLine: number;
}

function splitDocuments(text: string): DocumentText[] {
  // Each line keeps its line break, so a part is exactly the text it covers (CRLF stays CRLF).
  const lines = text.replace(/^\uFEFF/, "").split(/(?<=\n)/);
  const parts: DocumentText[] = [];
  let start = 0;
  lines.forEach((line, i) => {
    if (i > start && DOCUMENT_START.test(line)) {
      parts.push({ text: lines.slice(start, i).join(""), firstLine: start + 1 });
      start = i;
    }
  });
  parts.push({ text: lines.slice(start).join(""), firstLine: start + 1 });
  return parts;
}

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEmptyMapping(value: unknown): boolean {
  return isMapping(value) && Object.keys(value).length === 0;
}

// Kubernetes' List (kubectl get -o yaml) and typed lists (ServiceList, ...) hold their objects in `items`.
function isList(value: unknown): value is Mapping & { items: unknown[] } {
  return (
    isMapping(value) && typeof value.kind === "string" && value.kind.endsWith("List") && Array.isArray(value.items)
  );
}

function listItemNodes(doc: Document): readonly Node[] {
  const items = isMap(doc.contents) ? doc.contents.get("items", true) : undefined;
  return isSeq(items) ? (items.items as Node[]) : [];
}

/**
 * Go's YAML parser (and so Kubernetes and istioctl) ends a plain scalar at ":" only before whitespace,
 * so `[2001:db8::, k:]` is two strings. The YAML 1.2 parser here reads a ":" before "," or "]" as a
 * key, making `{"2001:db8:": null}`; turn such single-key items of flow sequences back into strings.
 */
function keepColonScalarsInFlowSequences(doc: Document, text: string): void {
  visit(doc, {
    Seq(_, seq) {
      if (!seq.flow) return;
      seq.items = seq.items.map((item) => {
        if (!isMap(item) || item.items.length !== 1 || !item.range) return item;
        const [{ key, value }] = item.items;
        const plainKey = isScalar(key) && key.type === Scalar.PLAIN;
        const emptyValue = value === null || (isScalar(value) && value.source === "");
        const [start, end] = item.range;
        return plainKey && emptyValue && text[end - 1] === ":" ? new Scalar(text.slice(start, end)) : item;
      });
    },
  });
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return isMapping(value) ? "a mapping" : `a ${typeof value}`;
}

/** Checks the shape every object needs: a mapping with string apiVersion and kind, metadata a mapping. */
function toConfigObject(value: unknown): { object: ConfigObject } | { error: string } {
  if (!isMapping(value)) return { error: `expected a mapping with apiVersion and kind, got ${describe(value)}` };
  for (const field of ["apiVersion", "kind"]) {
    if (!(field in value)) return { error: `missing "${field}"` };
    if (typeof value[field] !== "string")
      return { error: `"${field}" must be a string, got ${describe(value[field])}` };
  }
  if (value.metadata === undefined) value.metadata = {};
  if (!isMapping(value.metadata)) return { error: `"metadata" must be a mapping, got ${describe(value.metadata)}` };
  return { object: value as ConfigObject };
}
