// Where istioctl says a message is: the line a document starts on and the line of each field, as Istio's
// file source records them (pilot/pkg/config/file: kubeyaml chunks, BuildFieldPathMap). A chunk starts at
// its first line that is neither empty nor "---" (a leading comment counts); fields are keyed
// "{.spec.gateways[0]}" and only leaves (scalars) have a line.
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";

export interface ChunkLines {
  /** 1-based first line of the chunk. */
  startLine: number;
  /** 1-based last line of the chunk. */
  endLine: number;
  fields: ReadonlyMap<string, number>;
}

const SEPARATOR = /^---\s*$/;

export function chunkLines(text: string): ChunkLines[] {
  const lines = text.split("\n");
  const chunks: ChunkLines[] = [];
  let start = -1;
  const flush = (end: number) => {
    if (start < 0) return;
    const body = lines.slice(start, end).join("\n");
    if (body.trim() !== "")
      chunks.push({ startLine: start + 1, endLine: end, fields: fieldLines(body.trim(), start + 1) });
    start = -1;
  };
  lines.forEach((line, i) => {
    if (SEPARATOR.test(line)) {
      flush(i);
      return;
    }
    if (start < 0 && line !== "" && line !== "\r") start = i;
  });
  flush(lines.length);
  return chunks;
}

function fieldLines(chunk: string, startLine: number): Map<string, number> {
  const fields = new Map<string, number>();
  const counter = new LineCounter();
  const doc = parseDocument(chunk, { lineCounter: counter, prettyErrors: false });
  if (doc.errors.length > 0) return fields;
  const lineOf = (node: Node) => counter.linePos(node.range?.[0] ?? 0).line + startLine - 1;
  const walk = (node: unknown, path: string) => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const keyPath = `${path}.${key}`;
      const value = pair.value;
      if (isScalar(value)) fields.set(`{${keyPath}}`, lineOf(value));
      else if (isMap(value)) walk(value, keyPath);
      else if (isSeq(value)) {
        value.items.forEach((item, j) => {
          if (isScalar(item)) fields.set(`{${keyPath}[${j}]}`, lineOf(item));
          else walk(item, `${keyPath}[${j}]`);
        });
      }
    }
  };
  walk(doc.contents, "");
  return fields;
}
