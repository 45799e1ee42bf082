// A gzip'd tar archive of files held in memory, for `sluice bug-report`: POSIX ustar headers (a pax
// extended header for a path that does not fit ustar's 100 + 155 bytes), each file's data padded to
// 512-byte blocks, two zero blocks at the end, the whole compressed with node:zlib.
import { gzipSync } from "node:zlib";

const BLOCK = 512;

export interface TarEntry {
  /** The path inside the archive, `/`-separated, without a leading `/`. */
  path: string;
  data: string | Uint8Array;
  /** Modification time; default now. */
  mtime?: Date;
}

/** The archive of `entries`, gzip'd: a directory entry before the first file under each directory. */
export function gzipTar(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  const directories = new Set<string>();
  for (const entry of entries) {
    const mtime = entry.mtime ?? new Date();
    const parts = entry.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = `${parts.slice(0, i).join("/")}/`;
      if (directories.has(dir)) continue;
      directories.add(dir);
      blocks.push(...headerBlocks(dir, 0, mtime, "5", 0o755));
    }
    const data = typeof entry.data === "string" ? Buffer.from(entry.data, "utf8") : Buffer.from(entry.data);
    blocks.push(...headerBlocks(entry.path, data.length, mtime, "0", 0o644), data, padding(data.length));
  }
  blocks.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(blocks));
}

function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The header of one entry: ustar, preceded by a pax header when the path does not fit. */
function headerBlocks(path: string, size: number, mtime: Date, type: "0" | "5", mode: number): Buffer[] {
  const split = splitPath(path);
  if (split) return [ustarHeader(split.name, split.prefix, size, mtime, type, mode)];
  const pax = Buffer.from(paxRecord("path", path), "utf8");
  // Readers take the pax path; the ustar name (cut to its field) is for those that do not.
  const short = path.slice(-100);
  return [
    ustarHeader("PaxHeader", "", pax.length, mtime, "x", 0o644),
    pax,
    padding(pax.length),
    ustarHeader(short, "", size, mtime, type, mode),
  ];
}

/** ustar's name (100 bytes) and prefix (155), split at a `/`; undefined when the path cannot fit. */
function splitPath(path: string): { name: string; prefix: string } | undefined {
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  if (bytes(path) <= 100) return { name: path, prefix: "" };
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (bytes(prefix) <= 155 && bytes(name) <= 100 && name !== "") return { name, prefix };
  }
  return undefined;
}

/** A pax record, "<length> <key>=<value>\n", whose length counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyLength = Buffer.byteLength(body, "utf8");
  let length = bodyLength + String(bodyLength).length;
  if (String(length).length + bodyLength !== length) length = bodyLength + String(length).length;
  return `${length}${body}`;
}

function ustarHeader(name: string, prefix: string, size: number, mtime: Date, type: string, mode: number): Buffer {
  const header = Buffer.alloc(BLOCK);
  const text = (offset: number, length: number, value: string) => header.write(value, offset, length, "utf8");
  const octal = (offset: number, length: number, value: number) =>
    text(offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
  text(0, 100, name);
  octal(100, 8, mode);
  octal(108, 8, 0); // uid
  octal(116, 8, 0); // gid
  octal(124, 12, size);
  octal(136, 12, Math.floor(mtime.getTime() / 1000));
  text(148, 8, " ".repeat(8)); // the checksum counts its own field as spaces
  text(156, 1, type);
  text(257, 6, "ustar\0");
  text(263, 2, "00");
  text(345, 155, prefix);
  let sum = 0;
  for (const byte of header) sum += byte;
  text(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return header;
}
