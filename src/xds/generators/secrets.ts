// The config store's Kubernetes Secrets as the SDS and ECDS generators look them up.
import { type ConfigObject, kindKey, type ObjectKey } from "../../config/index.ts";
import type { StoredConfig } from "../../sources/index.ts";

export const SECRET_KIND = kindKey("", "Secret");

/** Secrets by namespace and name. */
export interface SecretLookup {
  secret(namespace: string, name: string): ConfigObject | undefined;
}

/** Objects in force by key (the config store). */
export interface ConfigGetter {
  get(key: ObjectKey): StoredConfig | undefined;
}

/** The Secrets of the config store, looked up by key (a router may ask for thousands). */
export function storeSecrets(store: ConfigGetter): SecretLookup {
  return { secret: (namespace, name) => store.get({ kind: SECRET_KIND, namespace, name })?.object };
}
