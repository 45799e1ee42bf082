// The mesh config in force while sluiced runs (Istio's mesh watcher): loaded from its source's text at
// start, and replaced when that text changes (the --meshConfig file or the `istio` ConfigMap), each
// listener told of the new config. Text that does not load changes nothing: the last good config
// stays in force and the error is returned for the caller to report.
import { loadMeshConfig, type MeshConfig } from "./mesh.ts";

export type MeshUpdate = { changed: false } | { changed: true; warnings: string[] } | { error: Error };

export class MeshWatcher {
  #mesh: MeshConfig;
  #text: string;
  readonly #warnings: string[];
  readonly #listeners = new Set<(mesh: MeshConfig) => void>();

  /** Loads `text` (undefined or empty: Istio's defaults); throws when it does not load, as istiod will not start then. */
  constructor(text?: string) {
    const { mesh, warnings } = loadMeshConfig(text);
    this.#mesh = mesh;
    this.#text = text ?? "";
    this.#warnings = warnings;
  }

  get mesh(): MeshConfig {
    return this.#mesh;
  }

  /** The warnings of the config loaded at start. */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  /** Puts `text` in force if it differs and loads; listeners are told of a change. */
  update(text: string | undefined): MeshUpdate {
    if ((text ?? "") === this.#text) return { changed: false };
    let loaded: ReturnType<typeof loadMeshConfig>;
    try {
      loaded = loadMeshConfig(text);
    } catch (err) {
      return { error: err instanceof Error ? err : new Error(String(err)) };
    }
    this.#mesh = loaded.mesh;
    this.#text = text ?? "";
    for (const listener of this.#listeners) listener(loaded.mesh);
    return { changed: true, warnings: loaded.warnings };
  }

  /** Calls `listener` with each new config; returns how to stop. */
  onChange(listener: (mesh: MeshConfig) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
