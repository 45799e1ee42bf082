// The control plane's state from config files, without a server (src/xds/translate.ts over the
// documents of files and directories). `sluice x translate`, `describe` and `envoyfilter` read it.

import type { ConfigObject, MeshConfig, MeshNetworks } from "../config/index.ts";
import { readConfigPaths } from "../config/index.ts";
import type { DumpType } from "../xds/index.ts";
import {
  type LoadResult,
  loadStateInputs,
  objectWhere,
  type ProxySpec,
  type StateInput,
  type TranslateResult,
  translateInputs,
} from "../xds/translate.ts";
import { cliLog } from "./log.ts";

export { type LoadResult, type ProxySpec, type TranslateState, translateProxy } from "../xds/translate.ts";

/** The documents of `paths` (files or directories), after a live cluster's objects. */
function pathInputs(paths: string[], clusterObjects: readonly ConfigObject[]): StateInput[] {
  const documents = readConfigPaths(paths);
  if (paths.length > 0) {
    const files = [...new Set(documents.map((d) => d.position.file))];
    cliLog("default").debug({ files, documents: documents.length }, "read config files");
  }
  return [
    ...clusterObjects.map((object) => ({ where: `${objectWhere(object)} (cluster)`, object, fromCluster: true })),
    ...documents.map((doc) => ({
      where: `${doc.position.file}:${doc.position.line}`,
      object: doc.object,
      error: doc.error ?? (doc.object ? undefined : "empty document"),
    })),
  ];
}

/**
 * The state of `paths` (files or directories), read as a cluster would take them (loadStateInputs).
 * `clusterObjects` (a live cluster's, listed) load first, so that a file's object replaces the cluster's.
 */
export function loadState(
  paths: string[],
  mesh: MeshConfig,
  domainSuffix: string,
  /** Objects to leave out (e.g. every EnvoyFilter, for the config before patches). */
  exclude: (object: ConfigObject) => boolean = () => false,
  clusterObjects: readonly ConfigObject[] = [],
  /** istiod's --networksConfig: the networks' gateways, and the network of endpoints without a label. */
  meshNetworks?: MeshNetworks,
): LoadResult {
  return loadStateInputs(pathInputs(paths, clusterObjects), { mesh, domainSuffix, meshNetworks, exclude });
}

/** The ConfigDump the control plane would give the proxy for `paths`, or the problems of the inputs. */
export function translate(
  paths: string[],
  proxy: ProxySpec,
  options: { mesh: MeshConfig; meshNetworks?: MeshNetworks; domainSuffix: string; types?: readonly DumpType[] },
): TranslateResult {
  return translateInputs(pathInputs(paths, []), proxy, options);
}
