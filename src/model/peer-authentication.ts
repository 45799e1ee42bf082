// The effective mTLS mode of a workload's inbound ports from PeerAuthentication, with Istio's
// precedence (ComposePeerAuthentication): the mesh-wide policy (root namespace, no selector), then
// the namespace policy, then the workload policy (selector matching the workload), then the
// workload policy's port-level setting; UNSET inherits from the level above, and with no policy
// at all the mode is PERMISSIVE. When a level has several policies the oldest wins.
import type { PeerAuthentication, PeerAuthenticationMtls } from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import { compareByCreationTime, namespaceOf } from "./config-meta.ts";
import { appendTo } from "./multimap.ts";

export type MtlsMode = "STRICT" | "PERMISSIVE" | "DISABLE";

export interface EffectiveMtls {
  /** The workload's mode for ports without a port-level setting. */
  mode: MtlsMode;
  /** Port-level modes (by workload port number) from the workload policy. */
  perPort: ReadonlyMap<number, MtlsMode>;
}

export class PeerAuthenticationIndex {
  private readonly byNamespace = new Map<string, PeerAuthentication[]>();

  constructor(
    configs: readonly PeerAuthentication[],
    private readonly rootNamespace: string,
  ) {
    for (const config of [...configs].sort(compareByCreationTime)) {
      const namespace = namespaceOf(config);
      appendTo(this.byNamespace, namespace, config);
    }
  }

  /** The policies that may apply to a workload: its namespace's and the root namespace's, selector matching, oldest first. */
  forWorkload(namespace: string, labels: Readonly<Record<string, string>>): PeerAuthentication[] {
    const namespaces = [...new Set([namespace, this.rootNamespace])];
    return namespaces.flatMap((ns) =>
      (this.byNamespace.get(ns) ?? []).filter((pa) => labelsContain(labels, pa.spec?.selector?.matchLabels ?? {})),
    );
  }

  effectiveMtls(namespace: string, labels: Readonly<Record<string, string>>): EffectiveMtls {
    const policies = this.forWorkload(namespace, labels);
    const mesh = policies.find((pa) => !hasSelector(pa) && namespaceOf(pa) === this.rootNamespace);
    const ns = policies.find((pa) => !hasSelector(pa) && namespaceOf(pa) !== this.rootNamespace);
    const workload = policies.find((pa) => hasSelector(pa) && namespaceOf(pa) !== this.rootNamespace);

    let mode: MtlsMode = "PERMISSIVE";
    for (const level of [mesh, ns, workload]) mode = modeOf(level?.spec?.mtls) ?? mode;
    const perPort = new Map<number, MtlsMode>();
    for (const [port, mtls] of Object.entries(workload?.spec?.portLevelMtls ?? {})) {
      perPort.set(Number(port), modeOf(mtls) ?? mode);
    }
    return { mode, perPort };
  }

  /**
   * The mode set for a whole namespace: its oldest policy without selector, else the mesh-wide
   * one (UNSET there is PERMISSIVE); undefined when neither exists.
   */
  namespaceMtlsMode(namespace: string): MtlsMode | undefined {
    const namespaceWide = (ns: string) => (this.byNamespace.get(ns) ?? []).find((pa) => !hasSelector(pa));
    const mesh = namespaceWide(this.rootNamespace);
    const meshMode = mesh ? (modeOf(mesh.spec?.mtls) ?? "PERMISSIVE") : undefined;
    const own = namespace === this.rootNamespace ? undefined : namespaceWide(namespace);
    if (!own) return meshMode;
    return modeOf(own.spec?.mtls) ?? meshMode ?? "PERMISSIVE";
  }

  /** The mode of one inbound port of a workload. */
  mtlsMode(namespace: string, labels: Readonly<Record<string, string>>, port: number): MtlsMode {
    const effective = this.effectiveMtls(namespace, labels);
    return effective.perPort.get(port) ?? effective.mode;
  }
}

function hasSelector(pa: PeerAuthentication): boolean {
  return Object.keys(pa.spec?.selector?.matchLabels ?? {}).length > 0;
}

/** The mode a policy level sets; undefined when UNSET (inherit). */
function modeOf(mtls: PeerAuthenticationMtls | undefined): MtlsMode | undefined {
  const mode = mtls?.mode;
  return mode === undefined || mode === "UNSET" ? undefined : mode;
}
