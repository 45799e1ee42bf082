// Which config files a directory holds, each with a signature that changes whenever the file may
// have: inode (an editor's or ConfigMap's replace-by-rename), size, and modification and change times.
import { readdir, stat } from "node:fs/promises";
import { extname, join, sep } from "node:path";
import { CONFIG_FILE_EXTENSIONS } from "../../config/decode-paths.ts";

/**
 * Config files (.yaml, .yml, .json) anywhere under `dir`, by path, with their signatures. Hidden
 * files and directories are skipped: editors' temporary files, and the `..data` / `..<timestamp>`
 * directories of a mounted Kubernetes ConfigMap, whose files the visible symlinks already stand for.
 */
export async function listConfigFiles(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const relative of (await readdir(dir, { recursive: true })).sort()) {
    if (!CONFIG_FILE_EXTENSIONS.includes(extname(relative).toLowerCase())) continue;
    if (relative.split(sep).some((segment) => segment.startsWith("."))) continue;
    const path = join(dir, relative);
    const stats = await stat(path).catch((err: NodeJS.ErrnoException) => {
      // Gone since the directory was read, or a dangling symlink: not a file (now).
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (stats?.isFile()) files.set(path, `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`);
  }
  return files;
}
