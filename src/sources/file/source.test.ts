import assert from "node:assert/strict";
import { mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { nameHosts, vs } from "../../../test/support/file-source.ts";
import { ConfigStore } from "../store.ts";
import type { ConfigEvent } from "../types.ts";
import { SMALL_FILE_BYTES } from "./judge.ts";
import { FileSource, type FileSourceOptions } from "./source.ts";

const VS = "networking.istio.io/VirtualService";
const NS = "/Namespace";

function namespaceJson(name: string): string {
  return JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
}

/** The VirtualServices in force, as "name=host", sorted. */
function virtualServices(store: ConfigStore): string[] {
  return nameHosts(store.collection(VS).list());
}

/** Waits (at most 5 s) until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const started: FileSource[] = [];

async function startSource(
  dir: string,
  options: Partial<Omit<FileSourceOptions, "dir" | "store">> = {},
): Promise<ConfigStore> {
  const store = new ConfigStore();
  const source = new FileSource({ dir, store, debounceMs: 20, pollIntervalMs: 20, ...options });
  started.push(source);
  await source.start();
  return store;
}

/**
 * Gives `path` new content in one step (a hidden temporary file renamed over it), so a scan sees the
 * old or the new text, never the empty file an in-place write passes through.
 */
async function replaceFile(path: string, text: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.tmp`);
  await writeFile(temporary, text);
  await rename(temporary, path);
}

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "sluice-file-source-"));
}

afterEach(async () => {
  for (const source of started.splice(0)) await source.stop();
});

describe("FileSource", () => {
  test("loads .yaml, .yml and .json files in nested directories, skipping hidden and other files", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "team/sub"), { recursive: true });
    await mkdir(join(dir, "..data"));
    await writeFile(join(dir, "a.yaml"), vs("a"));
    await writeFile(join(dir, "team/b.yml"), vs("b"));
    await writeFile(join(dir, "team/sub/ns.json"), namespaceJson("prod"));
    await writeFile(join(dir, "..data/hidden.yaml"), vs("hidden"));
    await writeFile(join(dir, ".c.yaml"), vs("c"));
    await writeFile(join(dir, "notes.txt"), vs("txt"));
    const store = await startSource(dir);
    assert.deepEqual(virtualServices(store), ["a=a", "b=b"]);
    assert.equal(store.collection(NS).get("prod")?.metadata.name, "prod");
    assert.equal(store.get({ kind: VS, namespace: "prod", name: "b" })?.scope, join(dir, "team/b.yml"));
    assert.deepEqual(store.problems(), []);
  });

  test("an edit is applied as one event batch", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "a.yaml"), [vs("a"), vs("b")].join("---\n"));
    const store = await startSource(dir);
    const batches: ConfigEvent[][] = [];
    store.onChange((events) => batches.push([...events]));
    await replaceFile(join(dir, "a.yaml"), [vs("a", "a2"), vs("b", "b2")].join("---\n"));
    await until(() => virtualServices(store).join() === "a=a2,b=b2", "the edit");
    assert.equal(batches.length, 1);
    assert.deepEqual(
      batches[0].map((e) => e.type),
      ["update", "update"],
    );
    // An editor writing in place: whatever a scan catches on the way, the final text wins.
    await writeFile(join(dir, "a.yaml"), [vs("a", "a3"), vs("b", "b3")].join("---\n"));
    await until(() => virtualServices(store).join() === "a=a3,b=b3", "the in-place edit");
  });

  test("an invalid file next to valid ones: the valid files load, the invalid one is reported with file:line", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "good.yaml"), vs("good"));
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, `${vs("fine")}---\n${vs("broken").replace("  hosts: [broken]", "  hosts: 7")}---\nkind: [\n`);
    const store = await startSource(dir);
    // A file with a document that does not decode adds nothing, not even its valid documents.
    assert.deepEqual(virtualServices(store), ["good=good"]);
    const wheres = store.problems().map((p) => p.where);
    assert.ok(wheres.includes(`${bad}:13`), `problems at ${wheres}`);
    assert.ok(wheres.includes(`${bad}:25`), `problems at ${wheres}`);
    assert.ok(
      store.problems().every((p) => p.source === "file" && p.scope === bad),
      "every problem belongs to the bad file",
    );
  });

  test("a partial write keeps the whole file's old state until the file parses again", async () => {
    const dir = await tempDir();
    const file = join(dir, "a.yaml");
    await writeFile(file, [vs("a"), vs("b")].join("---\n"));
    const store = await startSource(dir);
    const complete = [vs("a", "a2"), vs("b", "b2"), vs("c")].join("---\n");
    // As a scan may catch a file being written: a's new version complete, cut inside b's host list,
    // so b's document does not decode, and c not written yet. a's new version alone is not applied:
    // that would serve a state that is neither the old file nor the new one.
    await replaceFile(file, complete.slice(0, complete.indexOf("[b2") + 2));
    await until(() => store.problems().length > 0, "the syntax error to be reported");
    assert.deepEqual(virtualServices(store), ["a=a", "b=b"]);
    assert.match(store.problems()[0].message, /syntax error/);

    await replaceFile(file, complete);
    await until(() => virtualServices(store).join() === "a=a2,b=b2,c=c", "the completed file");
    assert.deepEqual(store.problems(), []);
  });

  test("an invalid edit keeps the last good version of that object", async () => {
    const dir = await tempDir();
    const file = join(dir, "a.yaml");
    await writeFile(file, [vs("a"), vs("b")].join("---\n"));
    const store = await startSource(dir);
    await replaceFile(file, [vs("a", "a2"), vs("b").replace("  hosts: [b]", "  hosts: 7")].join("---\n"));
    await until(() => store.problems().length > 0, "the invalid document to be reported");
    assert.deepEqual(virtualServices(store), ["a=a2", "b=b"]);
    assert.ok(store.problems().every((p) => p.where === `${file}:13`));
  });

  test("a deleted file removes its objects and its problems", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "keep.yaml"), vs("keep"));
    await writeFile(join(dir, "gone.yaml"), `${vs("gone")}---\n${vs("bad").replace("  hosts: [bad]", "  hosts: 7")}`);
    const store = await startSource(dir);
    assert.deepEqual(virtualServices(store), ["gone=gone", "keep=keep"]);
    assert.ok(store.problems().length > 0);
    await unlink(join(dir, "gone.yaml"));
    await until(() => virtualServices(store).join() === "keep=keep", "the deletion");
    assert.deepEqual(store.problems(), []);
  });

  test("a rename moves the objects to the new file without removing them", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "old.yaml"), vs("a"));
    const store = await startSource(dir);
    const events: ConfigEvent[] = [];
    store.onChange((batch) => events.push(...batch));
    await rename(join(dir, "old.yaml"), join(dir, "sub/new.yaml"));
    const key = { kind: VS, namespace: "prod", name: "a" };
    await until(() => store.get(key)?.scope === join(dir, "sub/new.yaml"), "the rename");
    assert.deepEqual(events, []);
    assert.deepEqual(virtualServices(store), ["a=a"]);
  });

  test("a directory created or removed after start brings or takes its files", async () => {
    const dir = await tempDir();
    const store = await startSource(dir);
    await mkdir(join(dir, "late/deeper"), { recursive: true });
    await writeFile(join(dir, "late/deeper/a.yaml"), vs("a"));
    await until(() => virtualServices(store).join() === "a=a", "the new directory's file");
    await rm(join(dir, "late"), { recursive: true });
    await until(() => store.collection(VS).size === 0, "the removed directory's file to go");
  });

  test("a mounted ConfigMap: an update swaps the ..data symlink, and the visible files follow it", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "..v1"));
    await writeFile(join(dir, "..v1/a.yaml"), vs("a"));
    await symlink("..v1", join(dir, "..data"));
    await symlink("..data/a.yaml", join(dir, "a.yaml"));
    const store = await startSource(dir);
    assert.deepEqual(virtualServices(store), ["a=a"]);
    // What the kubelet does: write the new version aside, then swap the ..data link in one rename.
    await mkdir(join(dir, "..v2"));
    await writeFile(join(dir, "..v2/a.yaml"), vs("a", "a2"));
    await symlink("..v2", join(dir, "..data_tmp"));
    await rename(join(dir, "..data_tmp"), join(dir, "..data"));
    await until(() => virtualServices(store).join() === "a=a2", "the swapped version");
  });

  test("the same object in two files: the first file wins, the other is reported, and takes over", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "a.yaml"), vs("dup", "from-a"));
    await writeFile(join(dir, "b.yaml"), vs("dup", "from-b"));
    const store = await startSource(dir);
    assert.deepEqual(virtualServices(store), ["dup=from-a"]);
    assert.deepEqual(
      store.problems().map((p) => p.scope),
      [join(dir, "b.yaml")],
    );
    await unlink(join(dir, "a.yaml"));
    await until(() => virtualServices(store).join() === "dup=from-b", "b.yaml to take over");
    assert.deepEqual(store.problems(), []);
  });

  test("polling follows the directory when watching is off", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "a.yaml"), vs("a"));
    const store = await startSource(dir, { poll: true });
    assert.deepEqual(virtualServices(store), ["a=a"]);
    await writeFile(join(dir, "a.yaml"), vs("a", "a2"));
    await writeFile(join(dir, "b.yaml"), vs("b"));
    await until(() => virtualServices(store).join() === "a=a2,b=b", "the polled changes");
  });

  test("a config directory that goes away keeps its config in force, and is followed again when it is back", async () => {
    const root = await tempDir();
    const dir = join(root, "config");
    await mkdir(dir);
    await writeFile(join(dir, "a.yaml"), vs("a"));
    const store = await startSource(dir);
    await rename(dir, join(root, "elsewhere"));
    await mkdir(join(root, "later"));
    await writeFile(join(root, "later/a.yaml"), vs("a", "a2"));
    await until(() => store.problems().some((p) => p.where === dir), "the missing directory to be reported");
    assert.deepEqual(virtualServices(store), ["a=a"]);
    await rename(join(root, "later"), dir);
    await until(() => virtualServices(store).join() === "a=a2", "the directory to be followed again");
    assert.deepEqual(store.problems(), []);
  });

  test("a file over the size limit is not read: a problem names it and its last good objects stay", async () => {
    const dir = await tempDir();
    const file = join(dir, "a.yaml");
    await writeFile(file, vs("a"));
    const store = await startSource(dir, { maxFileBytes: 500 });
    const large = [vs("a", "a2"), vs("b"), vs("c"), vs("d"), vs("e")].join("---\n");
    await replaceFile(file, large);
    await until(() => store.problems().length > 0, "the size to be reported");
    assert.deepEqual(virtualServices(store), ["a=a"]);
    assert.deepEqual(
      store.problems().map((p) => `${p.where}: ${p.message}`),
      [
        `${file}: ${file} is ${large.length} bytes, over the 500 bytes a config file may have (--configFileMaxBytes); it was not read`,
      ],
    );
    await replaceFile(file, vs("a", "a3"));
    await until(() => virtualServices(store).join() === "a=a3", "the file under the limit");
    assert.deepEqual(store.problems(), []);
  });

  test("a file too large to judge on the main thread is judged on the worker and applied", async () => {
    const dir = await tempDir();
    const names = Array.from({ length: Math.ceil(SMALL_FILE_BYTES / vs("a").length) + 10 }, (_, i) => `vs-${i}`);
    const text = names.map((name) => vs(name)).join("---\n");
    assert.ok(text.length > SMALL_FILE_BYTES);
    await writeFile(join(dir, "large.yaml"), text);
    const store = await startSource(dir);
    assert.equal(virtualServices(store).length, names.length);
    assert.deepEqual(store.problems(), []);
  });

  test("start rejects a directory that does not exist", async () => {
    const dir = join(await tempDir(), "missing");
    await assert.rejects(new FileSource({ dir, store: new ConfigStore() }).start(), /ENOENT/);
  });
});
