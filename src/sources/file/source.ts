// The file source (sluiced --configDir): every .yaml/.yml/.json under a directory, watched. Changes
// are debounced, then the directory is scanned: files that changed are decoded and validated (see
// load.ts for what a bad document does; judge.ts judges large files off the main thread) and each
// file is applied atomically with store.replace, its path being its scope. A file that changed while
// it was read is read again once it is still; one over the size limit is not read (its last good
// objects stay). One scan is one store batch, so a rename (one file gone, one new) moves
// objects without a moment in which they are missing. A watch on every directory (fs.watch) tells when
// to scan; where watching is unavailable or fails, the directory is polled instead.
import { type FSWatcher, watch } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { type Logger, pino } from "pino";
import type { ConfigObject } from "../../config/index.ts";
import type { ConfigStore } from "../store.ts";
import { DocumentJudge } from "./judge.ts";
import { applyVerdicts, type DocumentVerdict } from "./load.ts";
import { listConfigDirectory, listFile } from "./scan.ts";

/** The largest config file read by default: 8 MiB (Kubernetes keeps an object under 1.5 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;

export interface FileSourceOptions {
  dir: string;
  store: ConfigStore;
  /** The source id in the store; default "file". */
  source?: string;
  /** Quiet time after a change before the scan, so a burst of writes is read once; default 100 ms. */
  debounceMs?: number;
  /** Poll instead of watching (for file systems without change notification). */
  poll?: boolean;
  /** How often to scan when polling; default 1 s. */
  pollIntervalMs?: number;
  /** Files larger than this are not read, with a problem naming the file; default DEFAULT_MAX_FILE_BYTES. */
  maxFileBytes?: number;
  log?: Logger;
}

interface FileState {
  signature: string;
  /** The text last read; undefined while the file cannot be read. */
  text: string | undefined;
  /** What the file contributes to the store. */
  objects: readonly ConfigObject[];
}

/** A file's new text and its documents' verdicts (none if the text is unchanged), or why it was not read. */
type FileRead = { path: string; signature: string } & (
  | { text: string; verdicts: DocumentVerdict[] | undefined }
  | { error: string }
);

export class FileSource {
  readonly source: string;
  readonly dir: string;
  private readonly store: ConfigStore;
  private readonly debounceMs: number;
  private polling: boolean;
  private readonly pollIntervalMs: number;
  private readonly maxFileBytes: number;
  private readonly judge = new DocumentJudge();
  private readonly log: Logger;
  private readonly files = new Map<string, FileState>();
  /** One watch per directory, by path. */
  private readonly watchers = new Map<string, FSWatcher>();
  private poller: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  /** When the first change not yet scanned was seen; a steady stream of changes waits at most 10 debounces. */
  private firstUnscanned: number | undefined;
  /** Files named by change notifications since the last scan, read even if their signature looks unchanged. */
  private notified = new Set<string>();
  private scanning: Promise<void> | undefined;
  private rescan = false;
  private stopped = false;
  /** After the first load, file changes are logged at info level (the first load is summed up by the caller). */
  private changeLevel: "debug" | "info" = "debug";

  constructor(options: FileSourceOptions) {
    this.dir = options.dir;
    this.store = options.store;
    this.source = options.source ?? "file";
    this.debounceMs = options.debounceMs ?? 100;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.polling = options.poll ?? false;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.log = options.log ?? pino({ level: "silent" });
  }

  /** Loads the directory, and from then on follows it. Rejects if `dir` is not a readable directory. */
  async start(): Promise<void> {
    if (!(await stat(this.dir)).isDirectory()) throw new Error(`${this.dir} is not a directory`);
    if (this.polling) this.startPolling();
    this.requestScan();
    await this.scanning;
    this.changeLevel = "info";
  }

  /** Stops following the directory; resolves once a scan under way has been applied. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const watcher of this.watchers.values()) watcher.close();
    clearInterval(this.poller);
    clearTimeout(this.debounce);
    await this.scanning;
    await this.judge.close();
  }

  /**
   * Watches each directory listed and stops watching those gone; true if one is newly watched (a
   * change made in it before its watch began must be looked for by another scan). Directories are
   * watched one by one because a recursive watch on Linux follows inodes: it loses a file once an
   * editor or a ConfigMap update has replaced it by rename, where a directory watch names it still.
   */
  private watchDirectories(directories: readonly string[]): boolean {
    const listed = new Set(directories);
    for (const [dir, watcher] of this.watchers) {
      if (listed.has(dir)) continue;
      watcher.close();
      this.watchers.delete(dir);
    }
    let added = false;
    for (const dir of directories) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, (_event, name) => {
          if (name) this.notified.add(join(dir, name));
          this.changed();
        });
        watcher.on("error", (err) => this.pollInstead(err));
        this.watchers.set(dir, watcher);
        added = true;
      } catch (err) {
        // Removed since listed: the next scan forgets it. Anything else (no more inotify watches): poll.
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        this.pollInstead(err as Error);
        break;
      }
    }
    return added;
  }

  private pollInstead(err: Error): void {
    if (this.polling || this.stopped) return;
    this.log.warn({ dir: this.dir, err: err.message }, "cannot watch the config directory; polling it instead");
    this.polling = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.startPolling();
  }

  private startPolling(): void {
    this.poller = setInterval(() => this.requestScan(), this.pollIntervalMs);
  }

  private changed(): void {
    if (this.stopped) return;
    const now = Date.now();
    this.firstUnscanned ??= now;
    clearTimeout(this.debounce);
    const wait = Math.min(this.debounceMs, this.firstUnscanned + 10 * this.debounceMs - now);
    this.debounce = setTimeout(() => this.requestScan(), Math.max(wait, 0));
  }

  /** Scans now, or right after the scan under way (scans never overlap). */
  private requestScan(): void {
    this.firstUnscanned = undefined;
    if (this.stopped) return;
    if (this.scanning) {
      this.rescan = true;
      return;
    }
    this.scanning = this.scanUntilSettled().finally(() => {
      this.scanning = undefined;
    });
  }

  private async scanUntilSettled(): Promise<void> {
    do {
      this.rescan = false;
      try {
        await this.scan();
        this.store.reportProblems(this.source, this.dir, []);
      } catch (err) {
        // The directory itself is unreadable (removed, unmounted): keep the config in force, and poll,
        // as its watch may have gone with it, until it is back.
        const message = `cannot scan the config directory: ${(err as Error).message}`;
        this.store.reportProblems(this.source, this.dir, [{ source: this.source, where: this.dir, message }]);
        this.pollInstead(err as Error);
      }
    } while (this.rescan && !this.stopped);
  }

  private async scan(): Promise<void> {
    const notified = this.notified;
    this.notified = new Set();
    const { files: listed, directories } = await listConfigDirectory(this.dir);
    if (!this.polling && !this.stopped && this.watchDirectories(directories)) this.rescan = true;
    const reads: FileRead[] = [];
    for (const [path, { signature, size }] of listed) {
      if (this.files.get(path)?.signature === signature && !notified.has(path)) continue;
      if (size > this.maxFileBytes) {
        const error = `${path} is ${size} bytes, over the ${this.maxFileBytes} bytes a config file may have (--configFileMaxBytes); it was not read`;
        reads.push({ path, signature, error });
        continue;
      }
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (err) {
        const error = err as NodeJS.ErrnoException;
        // Removed since listed: the next scan (a change notification is on its way) sees it gone.
        if (error.code === "ENOENT") continue;
        reads.push({ path, signature, error: error.message });
        continue;
      }
      // Written to while it was read: the text may be part old, part new. Read it again once it is still.
      if ((await listFile(path))?.signature !== signature) {
        this.changed();
        continue;
      }
      if (this.files.get(path)?.text === text) {
        reads.push({ path, signature, text, verdicts: undefined });
        continue;
      }
      try {
        reads.push({ path, signature, text, verdicts: await this.judge.judge(this.source, path, text) });
      } catch (err) {
        reads.push({ path, signature, error: `cannot judge its documents: ${(err as Error).message}` });
      }
    }
    if (this.stopped) return;
    // Everything read is applied at once: one store batch, one event batch.
    this.store.batch(() => {
      for (const path of this.files.keys()) if (!listed.has(path)) this.remove(path);
      for (const read of reads) this.apply(read);
    });
  }

  private remove(path: string): void {
    this.files.delete(path);
    this.store.replace(this.source, path, []);
    this.store.reportProblems(this.source, path, []);
    this.log[this.changeLevel]({ file: path }, "config file removed");
  }

  private apply(read: FileRead): void {
    const previous = this.files.get(read.path);
    if ("error" in read) {
      // Unreadable (permissions, too large): what the file defined stays, until it can be read again.
      this.files.set(read.path, { signature: read.signature, text: undefined, objects: previous?.objects ?? [] });
      this.store.reportProblems(this.source, read.path, [
        { source: this.source, where: read.path, message: read.error },
      ]);
      return;
    }
    if (!read.verdicts) {
      // The text is the one last read: nothing to apply.
      if (previous) this.files.set(read.path, { ...previous, signature: read.signature });
      return;
    }
    const load = applyVerdicts(this.source, read.verdicts, previous?.objects ?? []);
    for (const warning of load.warnings) this.log.warn({ where: warning.where }, warning.message);
    this.files.set(read.path, { signature: read.signature, text: read.text, objects: load.objects });
    this.store.replace(this.source, read.path, load.objects);
    this.store.reportProblems(this.source, read.path, load.problems);
    this.log[this.changeLevel](
      { file: read.path, objects: load.objects.length, problems: load.problems.length },
      "config file loaded",
    );
  }
}
