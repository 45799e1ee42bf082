// What an analyzer is and the context it runs in (Istio's analysis.Analyzer and analysis.Context).
import { K } from "./kinds.ts";
import type { Message } from "./message.ts";
import { type Resource, specOf } from "./resource.ts";

export interface Analyzer {
  /** Istio's analyzer name (`gateway.SecretAnalyzer`): `--analyzer` and `--list-analyzers` use it. */
  name: string;
  description: string;
  /** The kinds (`group/Kind`, see kinds.ts) it reads; nothing else is visible to it. */
  inputs: readonly string[];
  analyze(ctx: AnalysisContext): void;
}

/** The resources of a run, by kind, and the messages reported so far. */
export class AnalysisContext {
  readonly messages: Message[] = [];
  readonly #byKind: ReadonlyMap<string, readonly Resource[]>;
  readonly #byKey = new Map<string, Resource>();

  constructor(
    resources: readonly Resource[],
    /** The Istio system namespace (istio-system). */
    readonly istioNamespace: string,
  ) {
    const byKind = new Map<string, Resource[]>();
    for (const r of resources) {
      const list = byKind.get(r.kind) ?? [];
      list.push(r);
      byKind.set(r.kind, list);
      // With several clusters, find() sees the first cluster's object, as Istio's aggregate store does.
      const key = resourceKey(r.kind, r.namespace, r.name);
      if (!this.#byKey.has(key)) this.#byKey.set(key, r);
    }
    this.#byKind = byKind;
  }

  /** Every resource of a kind, in load order. */
  list(kind: string): readonly Resource[] {
    return this.#byKind.get(kind) ?? [];
  }

  find(kind: string, namespace: string, name: string): Resource | undefined {
    return this.#byKey.get(resourceKey(kind, namespace, name));
  }

  exists(kind: string, namespace: string, name: string): boolean {
    return this.find(kind, namespace, name) !== undefined;
  }

  /** The mesh config's spec (the run presents one; {} without it), for analyzers reading K.MeshConfig. */
  meshConfig(): Record<string, unknown> {
    const mesh = this.list(K.MeshConfig)[0];
    return mesh ? specOf(mesh) : {};
  }

  report(message: Message): void {
    this.messages.push(message);
  }
}

function resourceKey(kind: string, namespace: string, name: string): string {
  return `${kind}|${namespace}|${name}`;
}
