// The `api` generator (Istio's apigen, "MCP over xDS"): the type URL names a kind as
// `group/version/kind` (`networking.istio.io/v1/VirtualService`, `core/v1/Service`), and every
// object of that kind in the config store is sent as an istio.mcp.v1alpha1.Resource named
// `namespace/name`. Another control plane's xDS config source reads it.
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { anyPack, StructSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { mcp, parseApiTypeUrl } from "../../api/index.ts";
import { type ConfigObject, kindKey, lookupKind } from "../../config/index.ts";
import { GATEWAY_API_SOURCE } from "../../gatewayapi/index.ts";
import type { StoredConfig } from "../../sources/index.ts";
import { XdsError } from "../errors.ts";
import type { Generator, XdsResource } from "../generator.ts";
import { verifiedNamespace } from "./debug-auth.ts";

const SECRET = kindKey("", "Secret");

/** The objects in force of one kind (the config store). */
export interface ConfigLister {
  list(kind: string): readonly StoredConfig[];
}

export interface ApiGeneratorOptions {
  store: ConfigLister;
  /**
   * Serve only callers with a verified identity in the root namespace, as Istio's
   * ENABLE_XDS_API_GENERATOR_AUTH (default true): config is cluster-wide.
   */
  requireAuth: boolean;
  rootNamespace: string;
}

export function apiGenerator(options: ApiGeneratorOptions): Generator {
  // One message per stored version: the encoding cache then encodes each object once for every caller.
  const resources = new WeakMap<StoredConfig, XdsResource>();
  const resourceOf = (stored: StoredConfig): XdsResource => {
    let r = resources.get(stored);
    if (!r) {
      r = { name: mcpName(stored.object), resource: toMcpResource(stored), version: String(stored.resourceVersion) };
      resources.set(stored, r);
    }
    return r;
  };
  return {
    generate(proxy, watched) {
      const namespace = verifiedNamespace(proxy);
      const controlPlane = namespace === options.rootNamespace;
      if (options.requireAuth && !controlPlane) {
        if (namespace === undefined) {
          throw new XdsError(
            status.UNAUTHENTICATED,
            "the api generator requires an authenticated control-plane identity",
          );
        }
        throw new XdsError(
          status.PERMISSION_DENIED,
          "the api generator is restricted to the control-plane (root) namespace",
        );
      }
      const gvk = parseApiTypeUrl(watched.typeUrl);
      // A kind this control plane does not serve is no error: it simply has no such config.
      if (!gvk || !lookupKind(gvk.group === "" ? gvk.version : `${gvk.group}/${gvk.version}`, gvk.kind)) {
        return { resources: [] };
      }
      const kind = kindKey(gvk.group, gvk.kind);
      // Istio's store holds no Secrets; Sluice's does, and sends them only to control-plane callers.
      if (kind === SECRET && !controlPlane) return { resources: [] };
      // Config converted from Gateway API is left out: the caller converts the Gateway API objects itself.
      const all = options.store
        .list(kind)
        .filter((stored) => stored.source !== GATEWAY_API_SOURCE)
        .map(resourceOf);
      return {
        resources: watched.wildcard ? all : all.filter((r) => watched.resourceNames.has(r.name)),
      };
    },
  };
}

/** `namespace/name`, or `/name` for a cluster-scoped object, as Istio names MCP resources. */
export function mcpName(obj: ConfigObject): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
}

/**
 * The object as an MCP resource. The body is a google.protobuf.Struct of every field but apiVersion,
 * kind and metadata: the spec, and the other top-level fields of built-in kinds (a Pod's status, an
 * EndpointSlice's endpoints). Istio packs the kind's own proto here; Sluice keeps objects as JSON.
 */
export function toMcpResource(stored: StoredConfig): mcp.Resource {
  const { apiVersion: _apiVersion, kind: _kind, metadata, ...body } = stored.object;
  const created = metadata.creationTimestamp ? new Date(metadata.creationTimestamp) : undefined;
  return create(mcp.ResourceSchema, {
    metadata: {
      name: mcpName(stored.object),
      createTime: created && !Number.isNaN(created.getTime()) ? timestampFromDate(created) : undefined,
      version: String(stored.resourceVersion),
      labels: metadata.labels ?? {},
      annotations: metadata.annotations ?? {},
    },
    body: anyPack(StructSchema, fromJson(StructSchema, body as JsonValue)),
  });
}
