// One file followed as it changes (the --meshConfig file, Istio's mesh watcher over its file): the
// directory is watched rather than the file, because a mounted ConfigMap changes by swapping a
// symlink in the directory, which a watch on the old file never sees. Events are coalesced for
// `debounceMs`; the file is then read and `onText` called when its text changed (undefined while it
// is missing).
import { readFileSync, watch } from "node:fs";
import { dirname } from "node:path";

export interface TextFileWatch {
  close(): void;
}

export function watchTextFile(
  path: string,
  onText: (text: string | undefined) => void,
  options: { debounceMs?: number; initial?: string } = {},
): TextFileWatch {
  let last = options.initial ?? read(path);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watcher = watch(dirname(path), () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const text = read(path);
      if (text === last) return;
      last = text;
      onText(text);
    }, options.debounceMs ?? 100);
  });
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
