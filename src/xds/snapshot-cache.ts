// Resources an embedding program sets, served as they are (go-control-plane's SnapshotCache): one set
// for every proxy, or one per node id, which replaces it for that node. As a generator it answers any
// type URL from the set of the proxy asking.
import { type DescMessage, fromJson, isMessage, type JsonObject, type Message } from "@bufbuild/protobuf";
import { registry, schemaForTypeUrl, typeUrl } from "../api/index.ts";
import type { ProxyNode } from "../model/index.ts";
import type { GenerateResult, Generator, WatchedResource, XdsResource } from "./generator.ts";

/**
 * A resource to serve: a protobuf-es message of an Envoy (or other registered) type, or its JSON form
 * with an `@type` naming the type, as Envoy's own config files write it.
 */
export type ResourceInput = Message | (JsonObject & { "@type": string });

/** Resources by type URL, each by name. */
type ResourceSet = ReadonlyMap<string, ReadonlyMap<string, XdsResource>>;

/** The name Envoy subscribes to a resource by: `name`, or `cluster_name` for a ClusterLoadAssignment. */
function resourceName(message: Message, type: string): string {
  const fields = message as unknown as { name?: unknown; clusterName?: unknown };
  const name = typeof fields.name === "string" && fields.name !== "" ? fields.name : fields.clusterName;
  if (typeof name !== "string" || name === "") throw new Error(`a ${type} resource needs a name`);
  return name;
}

/** The message of an input, read from JSON through the registry of every type Sluice knows. */
function toMessage(input: ResourceInput): { message: Message; schema: DescMessage } {
  if (isMessage(input)) {
    const schema = registry.getMessage(input.$typeName);
    if (!schema) throw new Error(`resource type ${input.$typeName} is not one Sluice can encode`);
    return { message: input, schema };
  }
  const { "@type": type, ...json } = input;
  const schema = schemaForTypeUrl(type);
  if (!schema) throw new Error(`@type ${JSON.stringify(type)} is not a type Sluice knows`);
  try {
    return { message: fromJson(schema, json, { registry }), schema };
  } catch (err) {
    const name = typeof json.name === "string" ? ` ${json.name}` : "";
    throw new Error(`${schema.typeName}${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `inputs` by type URL and name; throws on an unknown type, a bad JSON form or a repeated name. */
function resourceSet(inputs: readonly ResourceInput[]): ResourceSet {
  const set = new Map<string, Map<string, XdsResource>>();
  inputs.forEach((input, index) => {
    let read: { message: Message; schema: DescMessage };
    let name: string;
    try {
      read = toMessage(input);
      name = resourceName(read.message, read.schema.typeName);
    } catch (err) {
      throw new Error(`resources[${index}]: ${err instanceof Error ? err.message : String(err)}`);
    }
    const url = typeUrl(read.schema);
    const byName = set.get(url) ?? new Map<string, XdsResource>();
    if (byName.has(name)) throw new Error(`resources[${index}]: a second ${read.schema.typeName} named ${name}`);
    byName.set(name, { name, resource: read.message });
    set.set(url, byName);
  });
  return set;
}

export class SnapshotCache implements Generator {
  #everyNode: ResourceSet = new Map();
  readonly #byNode = new Map<string, ResourceSet>();

  /**
   * Serves `resources` to the node whose id is `nodeId`, or to every node without a set of its own.
   * The set replaces the previous one whole; nothing changes when it throws (an unknown type, a JSON
   * form that does not read, a resource without a name, two of a type with one name).
   */
  set(resources: readonly ResourceInput[], nodeId?: string): void {
    const set = resourceSet(resources);
    if (nodeId === undefined) this.#everyNode = set;
    else this.#byNode.set(nodeId, set);
  }

  /** Drops the node's own set: it is served the set for every node again. */
  forget(nodeId: string): void {
    this.#byNode.delete(nodeId);
  }

  /** The resources of `typeUrl` that `proxy` is served, by name. */
  resources(proxy: Pick<ProxyNode, "nodeId">, url: string): ReadonlyMap<string, XdsResource> {
    return (this.#byNode.get(proxy.nodeId) ?? this.#everyNode).get(url) ?? new Map();
  }

  generate(proxy: ProxyNode, watched: WatchedResource): GenerateResult {
    const byName = this.resources(proxy, watched.typeUrl);
    if (watched.wildcard) return { resources: [...byName.values()] };
    const resources: XdsResource[] = [];
    for (const name of watched.resourceNames) {
      const resource = byName.get(name);
      if (resource) resources.push(resource);
    }
    return { resources };
  }
}
