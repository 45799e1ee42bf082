// glibc keeps the pages of what is freed inside its heap resident, returning only a free top: the
// responses and HTTP/2 buffers a sync frees among the connections' long-lived allocations stay in RSS
// (after the scoped 2,000-sidecar sync, 44 of glibc's 127 MiB were free, and gdb's `call malloc_trim(0)`
// gave 35 MiB back). malloc_trim returns every free page; Node has no API for it, so a small addon of
// ours calls it (native/memory.c, built by `npm run build`). Without the addon (a packed install, a
// C library that is not glibc) nothing is trimmed. The idle collector trims after its collection at
// rest (xds/server/idle-gc.ts): RSS at rest after the scoped 2,000 sync 302-303 MiB against 336.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

interface MemoryAddon {
  trim(): boolean;
}

const ADDON_PATH = fileURLToPath(new URL("../../native/build/Release/memory.node", import.meta.url));
let addon: MemoryAddon | null | undefined;

function memoryAddon(): MemoryAddon | null {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url)(ADDON_PATH) as MemoryAddon;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** Gives the free pages of glibc's heap back to the system: true when some were. */
export function trimMallocHeap(): boolean {
  return memoryAddon()?.trim() ?? false;
}
