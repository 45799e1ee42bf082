// ECDS: the TypedExtensionConfigs a proxy asks for by name (Istio's pilot/pkg/xds/ecds.go): one per
// Wasm TrafficExtension attached to it (WasmPlugins translated; Lua ones are inline, not here), named as
// its listeners reference it. An image pull secret in the extension's namespace is handed over (its docker
// config) only to authenticated proxies (a verified identity, as istiod requires) of that namespace.

import type { core } from "../../api/index.ts";
import { kindKey } from "../../config/index.ts";
import type { TrafficExtension } from "../../config/types/index.ts";
import type { XdsCache } from "../../configgen/index.ts";
import type { MeshPush, ProxyNode, PushRequest, PushSnapshot } from "../../model/index.ts";
import { PUSH_KINDS } from "../../model/index.ts";
import { insertedExtensionConfigs, patchSetFor } from "../../networking/envoyfilter/index.ts";
import { extensionConfig, extensionResourceName, pullSecretResource } from "../../networking/extension/index.ts";
import type { Memos } from "../../util/index.ts";
import type { Generator } from "../generator.ts";
import type { SecretLookup } from "./secrets.ts";

const SECRET = kindKey("", "Secret");
const DOCKER_CONFIG_KEY = ".dockerconfigjson";

/** Only full pushes naming everything, a TrafficExtension, WasmPlugin, EnvoyFilter or Secret change extension configs. */
export function ecdsNeedsPush(req: PushRequest): boolean {
  if (req.forced) return true;
  if (!req.full) return false;
  if (req.configsUpdated.size === 0) return true;
  return [...req.configsUpdated.values()].some(
    (k) =>
      k.kind === PUSH_KINDS.trafficExtension ||
      k.kind === PUSH_KINDS.wasmPlugin ||
      k.kind === PUSH_KINDS.envoyFilter ||
      k.kind === SECRET,
  );
}

/** The docker config of the extension's pull secret, when the proxy may read it; "" otherwise. */
function pullSecret(extension: TrafficExtension, proxy: ProxyNode, secrets: SecretLookup | undefined): string {
  if (!pullSecretResource(extension) || !secrets) return "";
  // A plaintext connection proves no identity: no credentials (istiod's GeneratePullSecrets).
  if ((proxy.verifiedIdentities ?? []).length === 0) return "";
  const namespace = extension.metadata.namespace ?? "";
  if (namespace !== proxy.configNamespace) return "";
  const name = (extension.spec?.wasm?.imagePullSecret ?? "").split("/").pop() ?? "";
  const data = secrets.secret(namespace, name)?.data as Record<string, string> | undefined;
  const encoded = data?.[DOCKER_CONFIG_KEY];
  return encoded ? Buffer.from(encoded, "base64").toString() : "";
}

/** The extension configs of the Wasm TrafficExtensions attached to the proxy that `names` asks for. */
export function buildExtensionConfigs(
  extensions: readonly TrafficExtension[],
  names: ReadonlySet<string>,
  proxy: ProxyNode,
  secrets?: SecretLookup,
): core.TypedExtensionConfig[] {
  return extensions
    .filter((extension) => names.has(extensionResourceName(extension)))
    .flatMap((extension) => extensionConfig(extension, pullSecret(extension, proxy, secrets)) ?? []);
}

/**
 * Istio's BuildExtensionConfiguration: the EnvoyFilters' EXTENSION_CONFIG additions, then the
 * TrafficExtensions' configs, of the names asked for (the generator and config_dump).
 */
export function buildExtensionConfigurations(
  memos: Memos,
  push: MeshPush,
  proxy: ProxyNode,
  names: ReadonlySet<string>,
  secrets?: SecretLookup,
): core.TypedExtensionConfig[] {
  const snap = push.snapshot;
  const patches = patchSetFor(memos, snap.envoyFiltersFor(proxy), proxy);
  return [
    ...insertedExtensionConfigs(patches, [...names]),
    ...buildExtensionConfigs(snap.trafficExtensionsFor(proxy), names, proxy, secrets),
  ];
}

export function ecdsGenerator(cache: XdsCache, secrets?: SecretLookup): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      if (!ecdsNeedsPush(req)) return undefined;
      const configs = buildExtensionConfigurations(cache, req.push, proxy, watched.resourceNames, secrets);
      return { resources: configs.map((config) => ({ name: config.name, resource: config })) };
    },
  };
}
