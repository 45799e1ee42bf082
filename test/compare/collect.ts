// An ADS client that collects everything a control plane serves one proxy, as that proxy would ask
// for it: an Envoy (sidecar, router or waypoint) on delta xDS subscribes to every cluster and listener, then to
// the endpoints of its EDS clusters, the route configurations and extension configs its listeners
// name (and the DNS name table when DNS capture is on); a proxyless gRPC client on SotW asks for its
// targets' listeners, their route configurations, the clusters those name and their endpoints. Every
// response is ACKed. Collection ends when every type asked for has answered and the stream has been
// quiet for a while. Secrets are not asked for (the agent serves them); their names are collected. A
// ztunnel asks for every Address and Authorization.
import {
  create,
  createFileRegistry,
  createRegistry,
  type DescMessage,
  fromBinary,
  type JsonObject,
  type JsonValue,
  type Message,
  type MessageInitShape,
  toJson,
} from "@bufbuild/protobuf";
import { type Any, anyPack, anyUnpack, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Client, type ClientDuplexStream, credentials } from "@grpc/grpc-js";
import { deserializer, methodPath, serializer } from "../../src/api/grpc-service.ts";
import { type core, discovery, registry, schemaForTypeUrl } from "../../src/api/index.ts";
import { shortType, TypeUrl } from "../../src/xds/index.ts";
import type { ProxyKind } from "./proxies.ts";

/** Type (CDS, EDS, ...) → resource name → the resource as protobuf JSON. */
export type Snapshot = Map<string, Map<string, JsonValue>>;

export interface CollectOptions {
  kind: ProxyKind;
  node: JsonObject;
  /** Proxyless: the listener names (`host:port`) to ask for. */
  targets?: string[];
  /** How long the stream must stay quiet once every type has answered (ms). */
  quietMs?: number;
  /** Give up waiting after this long (ms); what arrived by then is the snapshot. */
  maxMs?: number;
}

/**
 * compare.Opaque stands in for an Any whose type neither Sluice nor this harness knows (istio-proxy's
 * own filter configs, the c-ares resolver): its JSON keeps the type URL and the encoded bytes, so two
 * such configs compare equal exactly when their bytes are.
 */
const OPAQUE_FILE = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "compare/opaque.proto",
    package: "compare",
    syntax: "proto3",
    messageType: [
      {
        name: "Opaque",
        field: [
          { name: "type_url", jsonName: "typeUrl", number: 1, type: 9, label: 1 },
          { name: "value", jsonName: "value", number: 2, type: 12, label: 1 },
        ],
      },
    ],
  }),
  () => undefined,
);
const OpaqueSchema = OPAQUE_FILE.getMessage("compare.Opaque") as DescMessage;
const decodeRegistry = createRegistry(registry, OPAQUE_FILE);

/** `message` with every Any of an unknown type (at any depth, inside known Anys too) made a compare.Opaque. */
function opaqueUnknownAnys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(opaqueUnknownAnys);
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  const o = value as Record<string, unknown>;
  if (o.$typeName === "google.protobuf.Any") {
    const any = o as unknown as Any;
    const inner = anyUnpack(any, registry);
    if (!inner) {
      const opaque = create(OpaqueSchema, { typeUrl: any.typeUrl, value: any.value } as never);
      return anyPack(OpaqueSchema, opaque);
    }
    const schema = registry.getMessage(inner.$typeName) as DescMessage;
    return anyPack(schema, opaqueUnknownAnys(inner) as Message);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = opaqueUnknownAnys(v);
  return out;
}

/** A resource decoded to protobuf JSON (an unknown resource type keeps its bytes). */
export function resourceJson(typeUrl: string, bytes: Uint8Array): JsonValue {
  const schema = schemaForTypeUrl(typeUrl);
  if (!schema) return { "@type": typeUrl, "@bytes": Buffer.from(bytes).toString("base64") };
  const message = opaqueUnknownAnys(fromBinary(schema, bytes)) as Message;
  return toJson(schema, message as never, { registry: decodeRegistry });
}

/** Calls `visit` on every object inside `value`, depth first. */
export function walkObjects(value: JsonValue, visit: (o: JsonObject) => void): void {
  if (Array.isArray(value)) for (const v of value) walkObjects(v, visit);
  else if (value !== null && typeof value === "object") {
    visit(value);
    for (const v of Object.values(value)) walkObjects(v, visit);
  }
}

/** The names a set of resources refers to through objects that have `key` (their `name`, or `pick`). */
function referencedNames(
  resources: Iterable<JsonValue>,
  has: (o: JsonObject) => boolean,
  pick: (o: JsonObject) => unknown,
): Set<string> {
  const names = new Set<string>();
  for (const r of resources) {
    walkObjects(r, (o) => {
      if (!has(o)) return;
      const name = pick(o);
      if (typeof name === "string" && name !== "") names.add(name);
    });
  }
  return names;
}

export const edsNames = (clusters: Iterable<JsonValue>) =>
  referencedNames(
    clusters,
    (o) => o.type === "EDS" && typeof o.name === "string",
    (o) => ((o.edsClusterConfig as JsonObject | undefined)?.serviceName as string | undefined) || o.name,
  );
export const rdsNames = (listeners: Iterable<JsonValue>) =>
  referencedNames(
    listeners,
    (o) => typeof o.rds === "object",
    (o) => (o.rds as JsonObject).routeConfigName,
  );
export const ecdsNames = (listeners: Iterable<JsonValue>) =>
  referencedNames(
    listeners,
    (o) => typeof o.configDiscovery === "object",
    (o) => o.name,
  );
export const sdsNames = (resources: Iterable<JsonValue>) =>
  referencedNames(
    resources,
    (o) => typeof o.sdsConfig === "object",
    (o) => o.name,
  );
/** The clusters route configurations send to, one or weighted (proxyless asks CDS for these by name). */
export const routedClusters = (routes: Iterable<JsonValue>) => {
  const names = new Set<string>();
  for (const r of routes)
    walkObjects(r, (o) => {
      if (typeof o.cluster === "string") names.add(o.cluster);
      const weighted = (o.weightedClusters as JsonObject | undefined)?.clusters;
      if (Array.isArray(weighted)) for (const c of weighted) names.add(String((c as JsonObject).name));
    });
  return names;
};

type Req = Uint8Array;

/** The name of a SotW resource (SotW responses carry no names). */
function sotwName(json: JsonValue): string {
  const o = json as JsonObject;
  return String(o.name ?? o.clusterName ?? "");
}

/** Collects one proxy's resources from the control plane at `address` (host:port, plaintext). */
export function collect(address: string, options: CollectOptions): Promise<Snapshot> {
  const quietMs = options.quietMs ?? 1500;
  const maxMs = options.maxMs ?? 30_000;
  const delta = options.kind !== "proxyless";
  const client = new Client(address, credentials.createInsecure());
  const method = delta
    ? discovery.AggregatedDiscoveryService.method.deltaAggregatedResources
    : discovery.AggregatedDiscoveryService.method.streamAggregatedResources;
  const stream = client.makeBidiStreamRequest(
    methodPath(method),
    (r: Req) => Buffer.from(r),
    (b: Buffer) => b,
  ) as ClientDuplexStream<Req, Buffer>;
  const snapshot: Snapshot = new Map();
  /** Type URL → the names subscribed (undefined: wildcard). */
  const subscribed = new Map<string, Set<string> | undefined>();
  const answered = new Set<string>();
  /** SotW: the last version and nonce per type, for ACKs and new subscriptions. */
  const sotwState = new Map<string, { version: string; nonce: string }>();
  let nodeSent = false;
  const node = () => {
    if (nodeSent) return undefined;
    nodeSent = true;
    return options.node as MessageInitShape<typeof core.NodeSchema>;
  };
  const encodeDelta = serializer(discovery.AggregatedDiscoveryService.method.deltaAggregatedResources.input);
  const encodeSotw = serializer(discovery.AggregatedDiscoveryService.method.streamAggregatedResources.input);
  const decodeDelta = deserializer(discovery.AggregatedDiscoveryService.method.deltaAggregatedResources.output);
  const decodeSotw = deserializer(discovery.AggregatedDiscoveryService.method.streamAggregatedResources.output);

  const typeMap = (typeUrl: string) => {
    const short = shortType(typeUrl);
    const held = snapshot.get(short) ?? new Map<string, JsonValue>();
    snapshot.set(short, held);
    return held;
  };

  /** Subscribes to `names` of a type (all, when undefined), adding to what is subscribed. */
  const subscribe = (typeUrl: string, names: Set<string> | undefined) => {
    const known = subscribed.get(typeUrl);
    if (subscribed.has(typeUrl) && names === undefined) return;
    if (names !== undefined && known !== undefined) {
      const added = [...names].filter((n) => !known.has(n));
      if (added.length === 0) return;
      for (const n of added) known.add(n);
      send(typeUrl, added);
      return;
    }
    subscribed.set(typeUrl, names === undefined ? undefined : new Set(names));
    send(typeUrl, names === undefined ? [] : [...names]);
  };
  const send = (typeUrl: string, added: string[]) => {
    if (delta) {
      stream.write(
        encodeDelta(
          create(discovery.DeltaDiscoveryRequestSchema, { typeUrl, node: node(), resourceNamesSubscribe: added }),
        ),
      );
    } else {
      const state = sotwState.get(typeUrl);
      const names = subscribed.get(typeUrl);
      stream.write(
        encodeSotw(
          create(discovery.DiscoveryRequestSchema, {
            typeUrl,
            node: node(),
            resourceNames: names ? [...names].sort() : [],
            versionInfo: state?.version ?? "",
            responseNonce: state?.nonce ?? "",
          }),
        ),
      );
    }
  };

  /** Follows what a type's resources refer to into the next subscriptions. */
  const follow = (typeUrl: string) => {
    const held = [...typeMap(typeUrl).values()];
    if (typeUrl === TypeUrl.Cluster) {
      const eds = edsNames(held);
      if (eds.size > 0 || delta) subscribe(TypeUrl.Endpoint, eds);
    } else if (typeUrl === TypeUrl.Listener) {
      subscribe(TypeUrl.Route, rdsNames(held));
      const ecds = ecdsNames(held);
      if (ecds.size > 0) subscribe(TypeUrl.ExtensionConfiguration, ecds);
    } else if (typeUrl === TypeUrl.Route && !delta) {
      subscribe(TypeUrl.Cluster, routedClusters(held));
    }
  };

  return new Promise<Snapshot>((resolve, reject) => {
    let quietTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(quietTimer);
      clearTimeout(maxTimer);
      stream.removeAllListeners("data");
      stream.on("error", () => {});
      stream.cancel();
      client.close();
      // Secrets are named, not fetched: every SDS name any resource refers to.
      const secrets = sdsNames([...(snapshot.get("CDS")?.values() ?? []), ...(snapshot.get("LDS")?.values() ?? [])]);
      if (secrets.size > 0) snapshot.set("SDS", new Map([...secrets].map((n) => [n, {}])));
      resolve(snapshot);
    };
    const maxTimer = setTimeout(finish, maxMs);
    const armQuiet = () => {
      clearTimeout(quietTimer);
      // Only the first subscriptions must be answered: a control plane may stay silent about names
      // it has nothing for (istiod does so on delta EDS), so those end with the quiet period.
      const waiting = initial.some((t) => !answered.has(t));
      quietTimer = setTimeout(finish, waiting ? maxMs : quietMs);
    };
    stream.on("data", (bytes: Buffer) => {
      try {
        if (delta) {
          const res = decodeDelta(bytes) as discovery.DeltaDiscoveryResponse;
          const held = typeMap(res.typeUrl);
          for (const r of res.resources) {
            if (r.resource) held.set(r.name, resourceJson(r.resource.typeUrl, r.resource.value));
          }
          for (const name of res.removedResources) held.delete(name);
          stream.write(
            encodeDelta(
              create(discovery.DeltaDiscoveryRequestSchema, { typeUrl: res.typeUrl, responseNonce: res.nonce }),
            ),
          );
          answered.add(res.typeUrl);
          follow(res.typeUrl);
        } else {
          const res = decodeSotw(bytes) as discovery.DiscoveryResponse;
          const held = typeMap(res.typeUrl);
          held.clear();
          for (const any of res.resources) {
            const json = resourceJson(any.typeUrl, any.value);
            held.set(sotwName(json), json);
          }
          sotwState.set(res.typeUrl, { version: res.versionInfo, nonce: res.nonce });
          send(res.typeUrl, []);
          answered.add(res.typeUrl);
          follow(res.typeUrl);
        }
        armQuiet();
      } catch (err) {
        finish();
        reject(err);
      }
    });
    stream.on("error", (err) => {
      clearTimeout(quietTimer);
      clearTimeout(maxTimer);
      client.close();
      reject(new Error(`${address}: ${err.message}`));
    });
    // ztunnel subscribes to every address and every policy (WDS and its authorization type) and nothing else.
    const ztunnel = options.kind === "ztunnel";
    const initial = ztunnel
      ? [TypeUrl.Address, TypeUrl.WorkloadAuthorization]
      : delta
        ? [TypeUrl.Cluster, TypeUrl.Listener]
        : [TypeUrl.Listener];
    if (ztunnel) {
      for (const type of initial) subscribe(type, undefined);
    } else if (delta) {
      subscribe(TypeUrl.Cluster, undefined);
      subscribe(TypeUrl.Listener, undefined);
      const meta = options.node.metadata as JsonObject | undefined;
      if (meta?.DNS_CAPTURE === "true") subscribe(TypeUrl.NameTable, undefined);
    } else {
      subscribe(TypeUrl.Listener, new Set(options.targets ?? []));
    }
    armQuiet();
  });
}
