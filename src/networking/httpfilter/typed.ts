// Small constructors shared by the HTTP filter files.
import { create, type DescMessage, type JsonObject, type MessageShape } from "@bufbuild/protobuf";
import { hcm, packAny, xdsType } from "../../api/index.ts";

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
  return typedHttpFilter(name, xdsType.TypedStructSchema, typedStruct(typeUrl, value));
}

export function typedStruct(typeUrl: string, value: JsonObject): xdsType.TypedStruct {
  return create(xdsType.TypedStructSchema, { typeUrl, value });
}
