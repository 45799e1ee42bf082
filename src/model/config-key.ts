// The identity of a config object in push requests and dependency checks.

/** Identity of one config object: kind key ("group/Kind" as in the config store), namespace, name. */
export interface ConfigKey {
  kind: string;
  namespace: string;
  name: string;
}

/** A set of config keys, deduplicated by value. */
export type ConfigKeySet = ReadonlyMap<string, ConfigKey>;

export function configKeyString(key: ConfigKey): string {
  return `${key.kind}/${key.namespace}/${key.name}`;
}

export function configKeySet(keys: Iterable<ConfigKey>): ConfigKeySet {
  return new Map([...keys].map((k) => [configKeyString(k), k]));
}
