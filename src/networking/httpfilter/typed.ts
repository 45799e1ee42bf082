// Small constructors shared by the HTTP filter files.
import { create, type DescMessage, type JsonObject, type MessageShape } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { hcm, packAny, udpaType } from "../../api/index.ts";

/** An HTTP filter whose config is `message`. */
export function typedHttpFilter<Desc extends DescMessage>(
  name: string,
  schema: Desc,
  message: MessageShape<Desc>,
): hcm.HttpFilter {
  return create(hcm.HttpFilterSchema, { name, configType: { case: "typedConfig", value: packAny(schema, message) } });
}

/**
 * An HTTP filter whose config type is not among Sluice's generated protos (Istio's own filters), sent as a
 * TypedStruct, as Istio sends it: Envoy (istio-proxy) decodes the JSON value as the named type.
 */
export function typedStructHttpFilter(name: string, typeUrl: string, value: JsonObject): hcm.HttpFilter {
  return create(hcm.HttpFilterSchema, {
    name,
    configType: { case: "typedConfig", value: istioTypedStruct(typeUrl, value) },
  });
}

/**
 * The config of one of istio-proxy's own filters as istiod packs it (protoconv.TypedStructWithFields):
 * an Any holding the older udpa.type.v1.TypedStruct, which Envoy reads the same as xds.type.v3's.
 */
export function istioTypedStruct(typeUrl: string, value: JsonObject): Any {
  return packAny(udpaType.TypedStructSchema, create(udpaType.TypedStructSchema, { typeUrl, value }));
}
