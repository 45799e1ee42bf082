// Some keys of one ConfigMap followed as they change (Istio's kubemesh ConfigMapSource and the
// injector's ConfigMap watcher: the `mesh` key of the `istio` ConfigMap, the `config` and `values`
// keys of `istio-sidecar-injector`, when no file is mounted): read once, then an informer on that
// ConfigMap alone (its namespace, a field selector on its name), `onTexts` called with the keys'
// texts whenever one of them changes (a key is undefined while the ConfigMap or the key is missing).
import { type Logger, pino } from "pino";
import { type ConfigObject, type KindInfo, lookupKind } from "../../config/index.ts";
import { KubeApiError, type KubeClient } from "./client.ts";
import { Informer } from "./informer.ts";
import { resourcePath } from "./paths.ts";

const CONFIG_MAP = lookupKind("v1", "ConfigMap") as KindInfo;

type ConfigMap = ConfigObject & { data?: Record<string, string> };

/** The texts of the followed keys, by key. */
export type ConfigMapTexts = Readonly<Record<string, string | undefined>>;

export interface ConfigMapKeysWatch {
  stop(): void;
}

function pick(configMap: ConfigMap | undefined, keys: readonly string[]): ConfigMapTexts {
  return Object.fromEntries(keys.map((key) => [key, configMap?.data?.[key]]));
}

/** The keys' texts now (each undefined when the ConfigMap or the key is missing). */
export async function readConfigMapKeys(
  client: KubeClient,
  namespace: string,
  name: string,
  keys: readonly string[],
): Promise<ConfigMapTexts> {
  try {
    const path = resourcePath({ kind: CONFIG_MAP, version: "v1", namespace, name });
    return pick((await client.request("GET", path)) as ConfigMap, keys);
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) return pick(undefined, keys);
    throw err;
  }
}

/**
 * Follows the keys from `initial` (what readConfigMapKeys gave) on; without `initial`, the first
 * listing is told whatever it holds (a missing ConfigMap included).
 */
export function watchConfigMapKeys(
  client: KubeClient,
  at: { namespace: string; name: string; keys: readonly string[] },
  initial: ConfigMapTexts | undefined,
  onTexts: (texts: ConfigMapTexts) => void,
  log: Logger = pino({ level: "silent" }),
): ConfigMapKeysWatch {
  let last: ConfigMapTexts | undefined = initial && Object.fromEntries(at.keys.map((key) => [key, initial[key]]));
  const seen = (configMap: ConfigMap | undefined) => {
    const texts = pick(configMap, at.keys);
    if (last && at.keys.every((key) => texts[key] === last?.[key])) return;
    last = texts;
    onTexts(texts);
  };
  const informer = new Informer(
    CONFIG_MAP,
    client,
    {
      replaceAll: (objects) => seen(objects[0] as ConfigMap | undefined),
      apply: (type, object) => seen(type === "DELETED" ? undefined : (object as ConfigMap)),
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
