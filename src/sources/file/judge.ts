// Judging a config file's documents without stalling the control plane. Decoding and validating
// YAML costs about 1 s per MB here (a 20 MB file of bad documents took 17 s), during which /ready, xDS
// and the webhooks would not answer; so a file larger than SMALL_FILE_BYTES is judged on a worker
// thread, started on first need and kept for the next. Small files (nearly all) are judged at once on
// the main thread, where a worker's round trip would cost more than the work.
import { Worker } from "node:worker_threads";
import { type DocumentVerdict, judgeDocuments } from "./load.ts";

/** Files of up to this many characters are judged on the main thread: a few milliseconds at most. */
export const SMALL_FILE_BYTES = 64 * 1024;

/** A file to judge on the worker thread (judge-worker.ts). */
export interface JudgeRequest {
  id: number;
  source: string;
  file: string;
  text: string;
}

export type JudgeReply = { id: number } & ({ verdicts: DocumentVerdict[] } | { error: string });

export class DocumentJudge {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: DocumentVerdict[]) => void; reject: (e: Error) => void }>();

  /** The verdicts on every document of `text`; rejects only if the worker thread itself fails. */
  judge(source: string, file: string, text: string): Promise<DocumentVerdict[]> {
    if (text.length <= SMALL_FILE_BYTES) return Promise.resolve(judgeDocuments(source, file, text));
    const worker = this.startWorker();
    const id = this.nextId++;
    const request: JudgeRequest = { id, source, file, text };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage(request);
    });
  }

  /** Stops the worker thread, if one was started; judgements under way are rejected. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private startWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startModuleWorker(new URL(`./judge-worker${extension(import.meta.url)}`, import.meta.url));
    worker.on("message", (reply: JudgeReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      // An idle worker must not keep the process alive.
      if (this.pending.size === 0) worker.unref();
      if ("error" in reply) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.verdicts);
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(err);
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the config judging thread stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }
}

/** ".ts" when running from source (through tsx), ".js" when compiled. */
function extension(url: string): string {
  return url.endsWith(".ts") ? ".ts" : ".js";
}

/**
 * A worker running the module at `url`. A TypeScript module (running from source) needs tsx's loader,
 * which Node does not carry into worker threads: the worker registers it before importing the module.
 */
function startModuleWorker(url: URL): Worker {
  if (!url.pathname.endsWith(".ts")) return new Worker(url);
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true });
}
