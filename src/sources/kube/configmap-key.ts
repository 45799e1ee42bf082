// One key of one ConfigMap followed as it changes (Istio's kubemesh ConfigMapSource: the `mesh` and
// `meshNetworks` keys of the `istio` ConfigMap when no mesh config file is mounted): read once, then
// an informer on that ConfigMap alone (its namespace, a field selector on its name), `onText` called
// with the key's text whenever it changes (undefined while the ConfigMap or the key is missing).
import { type Logger, pino } from "pino";
import { type ConfigObject, type KindInfo, lookupKind } from "../../config/index.ts";
import { KubeApiError, type KubeClient } from "./client.ts";
import { Informer } from "./informer.ts";
import { resourcePath } from "./paths.ts";

const CONFIG_MAP = lookupKind("v1", "ConfigMap") as KindInfo;

type ConfigMap = ConfigObject & { data?: Record<string, string> };

export interface ConfigMapKeyWatch {
  stop(): void;
}

/** The key's text now (undefined when the ConfigMap or the key is missing). */
export async function readConfigMapKey(
  client: KubeClient,
  namespace: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  try {
    const path = resourcePath({ kind: CONFIG_MAP, version: "v1", namespace, name });
    return ((await client.request("GET", path)) as ConfigMap).data?.[key];
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) return undefined;
    throw err;
  }
}

/** Follows the key from `initial` (what readConfigMapKey gave) on. */
export function watchConfigMapKey(
  client: KubeClient,
  at: { namespace: string; name: string; key: string },
  initial: string | undefined,
  onText: (text: string | undefined) => void,
  log: Logger = pino({ level: "silent" }),
): ConfigMapKeyWatch {
  let last = initial;
  const seen = (text: string | undefined) => {
    if (text === last) return;
    last = text;
    onText(text);
  };
  const informer = new Informer(
    CONFIG_MAP,
    client,
    {
      replaceAll: (objects) => seen((objects[0] as ConfigMap | undefined)?.data?.[at.key]),
      apply: (type, object) => seen(type === "DELETED" ? undefined : (object as ConfigMap).data?.[at.key]),
    },
    {
      backoff: { initialMs: 1000, maxMs: 30_000 },
      notInstalledRetryMs: 60_000,
      listPageSize: 500,
      namespace: at.namespace,
      fieldSelector: `metadata.name=${at.name}`,
      log,
    },
  );
  informer.start();
  return { stop: () => informer.stop() };
}
