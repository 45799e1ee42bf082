// The shapes of Istio's mesh configuration (istio.mesh.v1alpha1: MeshConfig, ProxyConfig, MeshNetworks and
// the messages they use) and the field tables mesh-decode.ts checks YAML against. Both are generated from
// Istio's mesh protos into mesh-types.gen.ts by scripts/gen-mesh-types.ts; this file adds only what Sluice
// keeps ahead of them.
import {
  MESSAGE_FIELDS as GENERATED_MESSAGE_FIELDS,
  type MeshConfig as GeneratedMeshConfig,
  type HTTPRetry,
} from "./mesh-types.gen.ts";

export * from "./mesh-types.gen.ts";

// MeshConfig.defaultInboundHttpRetryPolicy (the inbound counterpart of defaultHttpRetryPolicy) came into
// istio.io/api and istiod after the versions istiod's peer pins; Sluice already reads it. Once the pinned
// istio.io/api has the field the generated MeshConfig carries it and this addition can go.

export interface MeshConfig extends GeneratedMeshConfig {
  defaultInboundHttpRetryPolicy?: HTTPRetry;
}

/**
 * Field kinds by message (full proto name without package) and JSON field name: a scalar
 * (`string`, `bool`, `int32`, `uint32`, `int64`, `double`, `duration`), `struct` (any JSON object),
 * `object` (a networking message checked elsewhere), `enum:<name>`, `msg:<name>`; `[]` marks a list
 * and `map:` a map with string keys.
 */
export const MESSAGE_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  ...GENERATED_MESSAGE_FIELDS,
  MeshConfig: { ...GENERATED_MESSAGE_FIELDS.MeshConfig, defaultInboundHttpRetryPolicy: "object" },
};
