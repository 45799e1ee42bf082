// Generators turn a push context into the resources of one type URL for one proxy. They are kept
// in a registry keyed as Istio keys its XdsResourceGenerator map (pilot/pkg/xds/xdsgen.go), and
// never touch a stream: the server asks, encodes and sends.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { RequestedNames, XdsResource } from "../configgen/index.ts";
import type { ProxyNode, PushRequest } from "../model/index.ts";
import { XdsError } from "./errors.ts";
import { DEBUG_TYPE_PREFIX } from "./types.ts";

export type { XdsResource };

/** What a proxy subscribes to for one type URL. */
export interface WatchedResource extends RequestedNames {
  readonly typeUrl: string;
  /** Subscribed over delta (incremental) xDS, which VHDS requires; absent means state of the world. */
  readonly delta?: boolean;
}

export interface LogDetails {
  /** The response carries only part of the type (incremental EDS). */
  incremental?: boolean;
  additionalInfo?: string;
}

/** A resource left out of a response because it failed to build or to encode. */
export interface ResourceError {
  name: string;
  /** What went wrong (the error's message). */
  error: string;
}

/**
 * The resource of each name (none where `build` returns undefined), built one by one: a name whose
 * build throws is left out and named in `errors`, and the others are kept. An XdsError (the proxy
 * refused) propagates.
 */
export function buildNamed(
  names: Iterable<string>,
  build: (name: string) => XdsResource["resource"] | undefined,
): { resources: XdsResource[]; errors: ResourceError[] } {
  const resources: XdsResource[] = [];
  const errors: ResourceError[] = [];
  for (const name of names) {
    try {
      const resource = build(name);
      if (resource) resources.push({ name, resource });
    } catch (err) {
      if (err instanceof XdsError) throw err;
      errors.push({ name, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { resources, errors };
}

export interface GenerateResult {
  resources: XdsResource[];
  logDetails?: LogDetails;
  /**
   * Resources that threw while being built, left out of `resources`; the server logs and counts them,
   * and the proxy keeps the version of each it holds.
   */
  errors?: readonly ResourceError[];
}

export interface DeltaGenerateResult extends GenerateResult {
  /** Names the proxy must drop. */
  removed: string[];
  /**
   * Names the proxy is subscribed to from now on besides those it asked for (Istio's on-demand WDS:
   * the workloads behind an address it asked for, so that their changes reach it too).
   */
  subscribe?: readonly string[];
}

/**
 * Builds the resources of a type for a proxy from a push over `Snapshot`: the mesh's generators read a
 * PushSnapshot (`Generator<PushSnapshot>`), and a generator that never reads the snapshot is a plain
 * `Generator`, which a registry over any snapshot takes.
 */
export interface Generator<Snapshot = unknown> {
  /**
   * All the resources `watched` asks for. Return undefined when this push does not concern the
   * type (nothing is sent); return an empty list to tell the proxy it has none.
   */
  generate(proxy: ProxyNode, watched: WatchedResource, req: PushRequest<Snapshot>): GenerateResult | undefined;
  /**
   * Only what changed, for delta streams, and the names gone; a result not marked
   * `logDetails.incremental` is complete (what the proxy holds in scope and is not in it is gone too).
   * Without it the server diffs the output of `generate` against what the proxy holds.
   */
  generateDeltas?(
    proxy: ProxyNode,
    watched: WatchedResource,
    req: PushRequest<Snapshot>,
  ): DeltaGenerateResult | undefined;
}

/** How many type URLs, and proxy types and GENERATORs of one, GeneratorRegistry.find keeps answers for. */
const MAX_FOUND = 256;

/**
 * Generators by key: a type URL, `<proxyType>/<typeURL>`, `<GENERATOR>/<typeURL>`, a bare
 * GENERATOR metadata value (`grpc`), `event` (istio.io/debug/*) or `api` (the fallback).
 */
export class GeneratorRegistry<Snapshot = unknown> {
  readonly #generators = new Map<string, Generator<Snapshot>>();
  /**
   * What find answered, by type URL, then proxy type and GENERATOR: every push asks it for every
   * watch of every proxy pushed, and the keys it tries are new strings to hash each time.
   */
  readonly #found = new Map<string, Map<string, Generator<Snapshot> | undefined>>();

  /** Adds or replaces the generator for `key`. */
  register(key: string, generator: Generator<Snapshot>): void {
    this.#generators.set(key, generator);
    this.#found.clear();
  }

  get(key: string): Generator<Snapshot> | undefined {
    return this.#generators.get(key);
  }

  keys(): string[] {
    return [...this.#generators.keys()];
  }

  /**
   * Istio's lookup order: `GENERATOR/typeURL`, `proxyType/typeURL`, `typeURL`, the proxy's
   * GENERATOR, then `event` for debug types and `api` for the rest.
   */
  find(proxy: ProxyNode, typeUrl: string): Generator<Snapshot> | undefined {
    let byProxy = this.#found.get(typeUrl);
    if (!byProxy) {
      // Type URLs and GENERATOR come from proxies: what is kept is bounded.
      if (this.#found.size >= MAX_FOUND) this.#found.clear();
      byProxy = new Map();
      this.#found.set(typeUrl, byProxy);
    }
    const proxyKey = proxy.generator === undefined ? proxy.type : `${proxy.type} ${proxy.generator}`;
    if (byProxy.has(proxyKey)) return byProxy.get(proxyKey);
    const found = this.#lookUp(proxy, typeUrl);
    if (byProxy.size >= MAX_FOUND) byProxy.clear();
    byProxy.set(proxyKey, found);
    return found;
  }

  #lookUp(proxy: ProxyNode, typeUrl: string): Generator<Snapshot> | undefined {
    return (
      (proxy.generator !== undefined ? this.#generators.get(`${proxy.generator}/${typeUrl}`) : undefined) ??
      this.#generators.get(`${proxy.type}/${typeUrl}`) ??
      this.#generators.get(typeUrl) ??
      (proxy.generator !== undefined ? this.#generators.get(proxy.generator) : undefined) ??
      this.#generators.get(typeUrl.startsWith(DEBUG_TYPE_PREFIX) ? "event" : "api")
    );
  }
}

/** What a plugin module exports: `register(registry)`, as a named export or as the default export. */
type PluginRegister<Snapshot> = (registry: GeneratorRegistry<Snapshot>) => void | Promise<void>;

/**
 * Imports each plugin module (ESM) and lets it register its generators. A module exports
 * `register(registry)`, or a default export that is that function or an object holding it.
 */
export async function loadGeneratorPlugins<Snapshot>(
  paths: readonly string[],
  registry: GeneratorRegistry<Snapshot>,
): Promise<void> {
  for (const path of paths) {
    const url = pathToFileURL(resolve(path)).href;
    let mod: Record<string, unknown>;
    try {
      mod = await import(url);
    } catch (err) {
      throw new Error(`generator plugin ${path}: cannot load: ${err instanceof Error ? err.message : String(err)}`);
    }
    const register = pluginRegister<Snapshot>(mod);
    if (!register) {
      throw new Error(`generator plugin ${path}: exports no register(registry) function (named or default)`);
    }
    await register(registry);
  }
}

function pluginRegister<Snapshot>(mod: Record<string, unknown>): PluginRegister<Snapshot> | undefined {
  const candidates = [mod.register, mod.default, (mod.default as { register?: unknown } | undefined)?.register];
  return candidates.find((c): c is PluginRegister<Snapshot> => typeof c === "function");
}
