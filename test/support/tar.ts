// Reads a gzip'd tar archive back into its entries (ustar, with pax `path` records), for the tests of
// archives sluice writes (`sluice bug-report`).
import { gunzipSync } from "node:zlib";

export interface ReadEntry {
  path: string;
  /** "0" a file, "5" a directory. */
  type: string;
  data: Buffer;
}

export function readGzipTar(archive: Buffer): ReadEntry[] {
  const tar = gunzipSync(archive);
  const entries: ReadEntry[] = [];
  let paxPath: string | undefined;
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1) || "0";
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1];
      continue;
    }
    const prefix = field(345, 155);
    const name = paxPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    paxPath = undefined;
    entries.push({ path: name, type, data: Buffer.from(data) });
  }
  return entries;
}

/** The files of the archive (no directories), path to text. */
export function tarFiles(archive: Buffer): Map<string, string> {
  return new Map(
    readGzipTar(archive)
      .filter((e) => e.type === "0")
      .map((e) => [e.path, e.data.toString("utf8")]),
  );
}
