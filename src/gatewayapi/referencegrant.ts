// ReferenceGrants: which cross-namespace references (route → backend, gateway → secret) are allowed.
import type { gatewayapi } from "../config/index.ts";
import { namespaceOf } from "./model.ts";

// The kinds a grant can be from and to; any other kind in a grant is ignored.
const FROM_KINDS = new Set(["Gateway", "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "ListenerSet"]);
const TO_KINDS = new Set(["ConfigMap", "Secret", "Service", "XBackend", "InferencePool"]);

interface Grant {
  fromKind: string;
  fromNamespace: string;
  toKind: string;
  toNamespace: string;
  /** undefined allows every name. */
  toName?: string;
}

/** Normalised "group/kind" → kind name, for the kinds a grant may name. */
function grantKind(group: string, kind: string): string | undefined {
  const known: Record<string, string> = {
    "gateway.networking.k8s.io/Gateway": "Gateway",
    "gateway.networking.k8s.io/HTTPRoute": "HTTPRoute",
    "gateway.networking.k8s.io/GRPCRoute": "GRPCRoute",
    "gateway.networking.k8s.io/TLSRoute": "TLSRoute",
    "gateway.networking.k8s.io/TCPRoute": "TCPRoute",
    "gateway.networking.k8s.io/ListenerSet": "ListenerSet",
    "/ConfigMap": "ConfigMap",
    "/Secret": "Secret",
    "/Service": "Service",
    "core/ConfigMap": "ConfigMap",
    "core/Secret": "Secret",
    "core/Service": "Service",
    "gateway.networking.x-k8s.io/XBackend": "XBackend",
    "inference.networking.k8s.io/InferencePool": "InferencePool",
  };
  return known[`${group}/${kind}`];
}

export class ReferenceGrants {
  private readonly grants: Grant[] = [];

  constructor(objects: readonly gatewayapi.ReferenceGrant[]) {
    for (const obj of objects) {
      for (const from of obj.spec?.from ?? []) {
        const fromKind = grantKind(from.group, from.kind);
        if (!fromKind || !FROM_KINDS.has(fromKind)) continue;
        for (const to of obj.spec?.to ?? []) {
          const toKind = grantKind(to.group, to.kind);
          if (!toKind || !TO_KINDS.has(toKind)) continue;
          this.grants.push({
            fromKind,
            fromNamespace: from.namespace,
            toKind,
            toNamespace: namespaceOf(obj),
            toName: to.name,
          });
        }
      }
    }
  }

  /** Whether a `fromKind` in `fromNamespace` may reference `toKind` `toNamespace/toName`. */
  allowed(fromKind: string, fromNamespace: string, toKind: string, toNamespace: string, toName: string): boolean {
    return this.grants.some(
      (g) =>
        g.fromKind === fromKind &&
        g.fromNamespace === fromNamespace &&
        g.toKind === toKind &&
        g.toNamespace === toNamespace &&
        (g.toName === undefined || g.toName === toName),
    );
  }
}
