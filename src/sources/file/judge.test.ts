import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { vs } from "../../../test/support/file-source.ts";
import { DocumentJudge, SMALL_FILE_BYTES } from "./judge.ts";
import { judgeDocuments } from "./load.ts";

/** Resolves after `turns` turns of the event loop. */
function eventLoopTurns(turns: number): Promise<number> {
  return new Promise((resolve) => {
    let done = 0;
    const next = () => (++done === turns ? resolve(done) : setImmediate(next));
    setImmediate(next);
  });
}

/** Many VirtualService documents, a few invalid, making more than SMALL_FILE_BYTES. */
function largeText(): string {
  const docs: string[] = [];
  for (let i = 0; docs.join("---\n").length <= 4 * SMALL_FILE_BYTES; i++) {
    docs.push(i % 50 === 7 ? vs(`vs-${i}`).replace("  hosts: [", "  hosts: 7\n  gateways: [") : vs(`vs-${i}`));
  }
  return docs.join("---\n");
}

describe("DocumentJudge", () => {
  test("judges a large file on a worker thread while the event loop goes on, as the main thread would", async () => {
    const judge = new DocumentJudge();
    try {
      const text = largeText();
      let settled = false;
      const judged = judge.judge("file", "large.yaml", text).finally(() => {
        settled = true;
      });
      // The judging is not done on this thread: the event loop turns while it runs.
      await eventLoopTurns(3);
      assert.equal(settled, false);
      const verdicts = await judged;
      assert.deepEqual(verdicts, judgeDocuments("file", "large.yaml", text));
      assert.ok(verdicts.some((v) => v.verdict === "object" && v.errors.length > 0));

      // The worker is kept for the next file.
      assert.deepEqual(await judge.judge("file", "again.yaml", text), judgeDocuments("file", "again.yaml", text));
    } finally {
      await judge.close();
    }
  });

  test("judges a small file at once, and a worker that was closed is started again when needed", async () => {
    const judge = new DocumentJudge();
    try {
      assert.deepEqual(await judge.judge("file", "a.yaml", vs("a")), judgeDocuments("file", "a.yaml", vs("a")));
      await judge.close();
      const text = largeText();
      assert.deepEqual(await judge.judge("file", "b.yaml", text), judgeDocuments("file", "b.yaml", text));
    } finally {
      await judge.close();
    }
  });
});
