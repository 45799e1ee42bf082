// What a config directory holds: its config files, each with a signature that changes whenever the
// file may have (inode for an editor's or a ConfigMap's replace-by-rename, size, modification and
// change times), and its directories, which the source watches one by one.
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { CONFIG_FILE_EXTENSIONS } from "../../config/decode-paths.ts";

export interface DirectoryListing {
  /** Config files (.yaml, .yml, .json) by path, with their signatures; paths in sorted order. */
  files: Map<string, string>;
  /** `dir` and every directory under it. */
  directories: string[];
}

/**
 * Lists `dir` recursively. Hidden files and directories are skipped: editors' temporary files, and
 * the `..data` / `..<timestamp>` directories of a mounted Kubernetes ConfigMap, whose files the
 * visible symlinks already stand for. Symlinks to files are followed, symlinks to directories are not.
 */
export async function listConfigDirectory(dir: string): Promise<DirectoryListing> {
  const listing: DirectoryListing = { files: new Map(), directories: [] };
  await walk(dir, listing);
  return listing;
}

async function walk(dir: string, listing: DirectoryListing): Promise<void> {
  listing.directories.push(dir);
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    // A subdirectory removed while the walk was under way holds nothing any more.
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && listing.directories.length > 1) return;
    throw err;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await walk(path, listing);
      continue;
    }
    if (!CONFIG_FILE_EXTENSIONS.includes(extname(entry.name).toLowerCase())) continue;
    const stats = await stat(path).catch((err: NodeJS.ErrnoException) => {
      // Gone since the directory was read, or a dangling symlink: not a file (now).
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (stats?.isFile()) listing.files.set(path, `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`);
  }
}
