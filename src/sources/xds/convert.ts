// An MCP resource (what the `api` generator of another control plane sends) back into a config
// object: the kind from the type URL, metadata from the resource's metadata, and the body's fields.
import { type JsonObject, toJson } from "@bufbuild/protobuf";
import { anyUnpack, StructSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import type { mcp } from "../../api/index.ts";
import type { ConfigObject, ObjectMeta } from "../../config/index.ts";

/** Rebuilds the object `resource` describes, of kind `group/version/kind`; an Error says what is wrong with it. */
export function fromMcpResource(
  gvk: { group: string; version: string; kind: string },
  resource: mcp.Resource,
): ConfigObject | Error {
  const meta = resource.metadata;
  if (!meta) return new Error("resource without metadata");
  const slash = meta.name.indexOf("/");
  const namespace = slash < 0 ? "" : meta.name.slice(0, slash);
  const name = meta.name.slice(slash + 1);
  if (name === "") return new Error(`resource name ${JSON.stringify(meta.name)} is not namespace/name`);
  const body = resource.body ? anyUnpack(resource.body, StructSchema) : undefined;
  if (resource.body && !body) return new Error(`${meta.name}: body is a ${resource.body.typeUrl}, not a Struct`);
  const metadata: ObjectMeta = { name };
  if (namespace !== "") metadata.namespace = namespace;
  if (Object.keys(meta.labels).length > 0) metadata.labels = { ...meta.labels };
  if (Object.keys(meta.annotations).length > 0) metadata.annotations = { ...meta.annotations };
  if (meta.createTime) metadata.creationTimestamp = timestampDate(meta.createTime).toISOString().replace(".000Z", "Z");
  if (meta.version !== "") metadata.resourceVersion = meta.version;
  return {
    apiVersion: gvk.group === "" ? gvk.version : `${gvk.group}/${gvk.version}`,
    kind: gvk.kind,
    metadata,
    ...(body ? (toJson(StructSchema, body) as JsonObject) : {}),
  };
}
