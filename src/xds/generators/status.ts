// The `event` generator (Istio's StatusGen) for `istio.io/debug/*` type URLs: `syncz` is the sync
// status of every connected proxy as CSDS ClientConfigs; any other `istio.io/debug/<name>` runs the
// debug endpoint of that name, one resource per requested query string.
import { create } from "@bufbuild/protobuf";
import { AnySchema, type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { csds } from "../../api/index.ts";
import type { Generator, XdsResource } from "../generator.ts";
import type { ConnectionStatus, TypeSyncStatus } from "../server/index.ts";
import { DEBUG_TYPE_PREFIX, TypeUrl } from "../types.ts";
import { checkDebugEndpoint, type DebugAuthOptions, requireVerifiedCaller, restrictedNamespace } from "./debug-auth.ts";
import type { DebugEndpoints } from "./debug-endpoints.ts";

export const SYNCZ_TYPE_URL = `${DEBUG_TYPE_PREFIX}syncz`;

export interface StatusGeneratorOptions {
  /** The sync status of every connection (XdsServer.syncStatus). */
  syncStatus: () => ConnectionStatus[];
  endpoints: DebugEndpoints;
  auth: DebugAuthOptions;
}

export function statusGenerator(options: StatusGeneratorOptions): Generator {
  return {
    generate(proxy, watched) {
      const authEnabled = options.auth.enabled ?? true;
      const namespace = authEnabled ? requireVerifiedCaller(proxy) : undefined;
      const restrictedTo = namespace === undefined ? undefined : restrictedNamespace(namespace, options.auth);
      if (watched.typeUrl === SYNCZ_TYPE_URL) return { resources: syncz(options.syncStatus(), restrictedTo) };
      const name = watched.typeUrl.slice(DEBUG_TYPE_PREFIX.length);
      checkDebugEndpoint(name, restrictedTo);
      const queries = watched.wildcard || watched.resourceNames.size === 0 ? [""] : [...watched.resourceNames];
      return {
        resources: queries.map((query) => ({
          name: query || name,
          resource: create(AnySchema, {
            typeUrl: TypeUrl.Debug,
            value: options.endpoints.serve(query ? `${name}?${query}` : name, restrictedTo),
          }),
        })),
      };
    },
  };
}

/** One ClientConfig per proxy (connections without proxy metadata, such as CLI queries, are left out). */
function syncz(connections: readonly ConnectionStatus[], restrictedTo: string | undefined): XdsResource[] {
  const resources: XdsResource[] = [];
  for (const c of connections) {
    const { proxy } = c;
    if (proxy.metadata.PROXY_CONFIG === undefined && proxy.type !== "ztunnel") continue;
    if (restrictedTo !== undefined && proxy.configNamespace !== restrictedTo) continue;
    const config = create(csds.ClientConfigSchema, {
      node: {
        id: proxy.id,
        metadata: {
          CLUSTER_ID: proxy.clusterId,
          NAMESPACE: proxy.metadata.NAMESPACE ?? "",
          ISTIO_VERSION: proxy.metadata.ISTIO_VERSION ?? "",
        },
      },
      genericXdsConfigs: [...c.types]
        .sort((a, b) => (a.typeUrl < b.typeUrl ? -1 : a.typeUrl > b.typeUrl ? 1 : 0))
        .map((t) => genericConfig(t)),
    });
    resources.push({ name: proxy.id, resource: config });
  }
  return resources;
}

function genericConfig(t: TypeSyncStatus): csds.ClientConfig_GenericXdsConfig {
  const lastUpdated: Timestamp | undefined = t.sent ? timestampFromDate(t.sent.time) : undefined;
  return create(csds.ClientConfig_GenericXdsConfigSchema, {
    typeUrl: t.typeUrl,
    configStatus: CONFIG_STATUS[t.state],
    lastUpdated,
    errorState:
      t.state === "NACKED" && t.lastNack ? { lastUpdateAttempt: lastUpdated, details: t.lastNack.message } : undefined,
  });
}

const CONFIG_STATUS: Record<TypeSyncStatus["state"], csds.ConfigStatus> = {
  SYNCED: csds.ConfigStatus.SYNCED,
  NOT_SENT: csds.ConfigStatus.NOT_SENT,
  STALE: csds.ConfigStatus.STALE,
  NACKED: csds.ConfigStatus.ERROR,
};
