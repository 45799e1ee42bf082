import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { configFiles, type DecodedDocument, decodeConfigText, readConfigPaths } from "./decode.ts";

const summary = (docs: DecodedDocument[]) =>
  docs.map((d) => ({
    index: d.position.index,
    line: d.position.line,
    name: d.object?.metadata.name,
    error: d.error,
  }));

describe("decodeConfigText", () => {
  test("gives each document its index and the line where its content starts", () => {
    const text = [
      "# leading comment",
      "apiVersion: v1",
      "kind: Service",
      "metadata:",
      "  name: a",
      "---",
      "",
      "apiVersion: v1",
      "kind: Service",
      "metadata: {name: b}",
      "--- # comment on the marker",
      "# only a comment",
      "---",
      "{}",
      "---",
      "apiVersion: v1",
      "kind: Secret",
      "metadata: {name: c}",
    ].join("\n");
    const docs = decodeConfigText(text, "f.yaml");
    assert.deepEqual(summary(docs), [
      { index: 0, line: 2, name: "a", error: undefined },
      { index: 1, line: 8, name: "b", error: undefined },
      { index: 2, line: 16, name: "c", error: undefined },
    ]);
    assert.deepEqual(docs[0].position, { file: "f.yaml", index: 0, line: 2 });
    assert.equal(docs[2].object?.kind, "Secret");
  });

  test("a broken document between two good ones gives one error at the fault's line", () => {
    const text = [
      "apiVersion: v1",
      "kind: Service",
      "metadata: {name: first}",
      "---",
      "apiVersion: v1",
      'kind: "Service',
      "metadata: {name: broken}",
      "---",
      "apiVersion: v1",
      "kind: Service",
      "metadata: {name: last}",
    ].join("\n");
    const docs = decodeConfigText(text, "f.yaml");
    assert.equal(docs.length, 3);
    assert.equal(docs[0].object?.metadata.name, "first");
    assert.equal(docs[1].object, undefined);
    assert.match(docs[1].error ?? "", /^syntax error: .*quote/);
    // The parser finds the unclosed quote at the end of the document: its last line.
    assert.equal(docs[1].position.line, 7);
    assert.equal(docs[2].object?.metadata.name, "last");
    assert.equal(docs[2].position.line, 9);
  });

  test("reports the exact line of a duplicate key", () => {
    const text = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n";
    const [doc] = decodeConfigText(text, "f.yaml");
    assert.deepEqual(doc, {
      position: { file: "f.yaml", index: 0, line: 5 },
      error: "syntax error: Map keys must be unique",
    });
  });

  test("checks the shape of each object", () => {
    const text = [
      "kind: Service",
      "---",
      "apiVersion: v1",
      "metadata: {}",
      "---",
      "apiVersion: 1",
      "kind: Service",
      "---",
      "apiVersion: v1",
      "kind: Service",
      "metadata: nope",
      "---",
      "- a list",
      "---",
      "just text",
    ].join("\n");
    assert.deepEqual(
      decodeConfigText(text, "f.yaml").map((d) => [d.position.line, d.error]),
      [
        [1, 'missing "apiVersion"'],
        [3, 'missing "kind"'],
        [6, '"apiVersion" must be a string, got a number'],
        [9, '"metadata" must be a mapping, got a string'],
        [13, "expected a mapping with apiVersion and kind, got a list"],
        [15, "expected a mapping with apiVersion and kind, got a string"],
      ],
    );
  });

  test("an object without metadata gets an empty one", () => {
    const [doc] = decodeConfigText("apiVersion: v1\nkind: Service\n", "f.yaml");
    assert.deepEqual(doc.object, { apiVersion: "v1", kind: "Service", metadata: {} });
  });

  test("expands a List and a typed list into their items, each with its own line", () => {
    const text = [
      "apiVersion: v1",
      "kind: List",
      "items:",
      "- apiVersion: v1",
      "  kind: Service",
      "  metadata: {name: a}",
      "- apiVersion: v1",
      "  metadata: {name: b}",
      "---",
      "apiVersion: v1",
      "kind: ServiceList",
      "items:",
      "  - apiVersion: v1",
      "    kind: Service",
      "    metadata: {name: c}",
    ].join("\n");
    assert.deepEqual(summary(decodeConfigText(text, "f.yaml")), [
      { index: 0, line: 4, name: "a", error: undefined },
      { index: 1, line: 7, name: undefined, error: 'items[1]: missing "kind"' },
      { index: 2, line: 13, name: "c", error: undefined },
    ]);
  });

  test("decodes JSON, including a JSON List", () => {
    const json = JSON.stringify(
      {
        apiVersion: "v1",
        kind: "List",
        items: [
          { apiVersion: "v1", kind: "Service", metadata: { name: "a" } },
          { apiVersion: "v1", kind: "Service", metadata: { name: "b", labels: { app: "x" } } },
        ],
      },
      null,
      "\t",
    );
    const docs = decodeConfigText(json, "f.json");
    assert.deepEqual(summary(docs), [
      { index: 0, line: 5, name: "a", error: undefined },
      { index: 1, line: 12, name: "b", error: undefined },
    ]);
    assert.deepEqual(docs[1].object?.metadata.labels, { app: "x" });
  });

  test("reports broken JSON with its line", () => {
    const [doc] = decodeConfigText('{\n  "apiVersion": "v1",\n  "kind": "Service"\n  "metadata": {}\n}\n', "f.json");
    assert.equal(doc.object, undefined);
    assert.match(doc.error ?? "", /^syntax error: /);
    assert.equal(doc.position.line, 4);
  });

  test("handles CRLF line endings and a byte-order mark", () => {
    const text =
      "\uFEFFapiVersion: v1\r\nkind: Service\r\nmetadata: {name: a}\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata: {name: b}\r\n";
    assert.deepEqual(summary(decodeConfigText(text, "f.yaml")), [
      { index: 0, line: 1, name: "a", error: undefined },
      { index: 1, line: 5, name: "b", error: undefined },
    ]);
  });

  test("reads a colon before ',' or ']' in a flow sequence as part of the string, as Go's YAML does", () => {
    const [doc] = decodeConfigText(
      "apiVersion: v1\nkind: X\nmetadata: {}\nspec:\n  addresses: [1.2.3.4, 001:db8::, k:, k2: , '::', ::]\n  m: [k: v, \"q\":]\n",
      "f.yaml",
    );
    assert.deepEqual(doc.object?.spec, {
      addresses: ["1.2.3.4", "001:db8::", "k:", { k2: null }, "::", "::"],
      m: [{ k: "v" }, { q: null }],
    });
  });

  test("reads plain scalars as Kubernetes does (YAML 1.1 booleans, leading-zero octal)", () => {
    const [doc] = decodeConfigText(
      "apiVersion: v1\nkind: X\nmetadata: {}\nspec: {a: [yes, No, on, OFF, y, n, true, 'yes', \"on\", yess], b: [0777, -010, 0o17, 08, 0, 10]}\n",
      "f.yaml",
    );
    assert.deepEqual(doc.object?.spec, {
      a: [true, false, true, false, true, false, true, "yes", "on", "yess"],
      b: [511, -8, 15, 8, 0, 10],
    });
  });

  test("resolves merge keys and refuses excessive aliases", () => {
    const merged = decodeConfigText(
      "base: &b {apiVersion: v1, kind: Service}\n<<: *b\nmetadata: {name: a}\n",
      "f.yaml",
    )[0];
    assert.equal(merged.object?.kind, "Service");
    // Each level refers to the one before ten times: 10^6 nodes from a few lines.
    const lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i <= 6; i++)
      lines.push(
        `l${i}: &l${i} [${Array(10)
          .fill(`*l${i - 1}`)
          .join(", ")}]`,
      );
    const [bomb] = decodeConfigText(lines.join("\n"), "f.yaml");
    assert.equal(bomb.object, undefined);
    assert.match(bomb.error ?? "", /alias/i);
  });
});

describe("readConfigPaths", () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-decode-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("walks directories recursively, keeps config extensions, and sorts", () => {
    mkdirSync(join(dir, "sub"));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    writeFileSync(join(dir, "b.yaml"), service("b"));
    writeFileSync(join(dir, "a.yml"), service("a"));
    writeFileSync(
      join(dir, "sub", "c.json"),
      JSON.stringify({ apiVersion: "v1", kind: "Service", metadata: { name: "c" } }),
    );
    writeFileSync(join(dir, "notes.txt"), "not config");
    writeFileSync(join(dir, "explicit.conf"), service("explicit"));

    assert.deepEqual(configFiles(dir), [join(dir, "a.yml"), join(dir, "b.yaml"), join(dir, "sub", "c.json")]);
    const docs = readConfigPaths([dir, join(dir, "explicit.conf")]);
    assert.deepEqual(
      docs.map((d) => [d.position.file, d.object?.metadata.name]),
      [
        [join(dir, "a.yml"), "a"],
        [join(dir, "b.yaml"), "b"],
        [join(dir, "sub", "c.json"), "c"],
        [join(dir, "explicit.conf"), "explicit"],
      ],
    );
  });

  test("throws for a path that does not exist", () => {
    assert.throws(() => readConfigPaths([join(dir, "missing.yaml")]), /ENOENT/);
  });
});
