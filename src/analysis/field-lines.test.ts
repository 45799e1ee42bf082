import assert from "node:assert/strict";
import { test } from "node:test";
import { chunkLines } from "./field-lines.ts";

test("chunks start at their first non-empty line (comments count) and leaves map to their lines", () => {
  const text = [
    "# first", // 1
    "apiVersion: v1", // 2
    "kind: Service", // 3
    "metadata:", // 4
    "  name: a", // 5
    "---", // 6
    "", // 7
    "kind: VirtualService", // 8
    "spec:", // 9
    "  gateways: [gw, mesh]", // 10
    "  http:", // 11
    "  - route:", // 12
    "    - destination:", // 13
    "        host: reviews", // 14
    "",
  ].join("\n");
  const [first, second] = chunkLines(text);
  assert.equal(first.startLine, 1);
  assert.equal(first.fields.get("{.metadata.name}"), 5);
  assert.equal(second.startLine, 8);
  assert.equal(second.fields.get("{.spec.gateways[1]}"), 10);
  assert.equal(second.fields.get("{.spec.http[0].route[0].destination.host}"), 14);
  assert.equal(second.fields.has("{.spec.http}"), false);
});

test("a document that does not parse has no field lines but keeps its place", () => {
  const [chunk] = chunkLines("kind: [unclosed\n");
  assert.equal(chunk.startLine, 1);
  assert.equal(chunk.fields.size, 0);
});
