// The worker thread of judge.ts: judges the documents of the files it is sent, one at a time.
import { parentPort } from "node:worker_threads";
import type { JudgeReply, JudgeRequest } from "./judge.ts";
import { judgeDocuments } from "./load.ts";

const port = parentPort;
if (!port) throw new Error("judge-worker.ts runs as a worker thread");
port.on("message", (request: JudgeRequest) => {
  let reply: JudgeReply;
  try {
    reply = { id: request.id, verdicts: judgeDocuments(request.source, request.file, request.text) };
  } catch (err) {
    reply = { id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
