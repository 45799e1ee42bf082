// EXTENSION_CONFIG and BOOTSTRAP patches. Extension configs are only added (Istio's
// InsertedExtensionConfigurations: ADD patches whose config has a name the proxy asks for); the
// bootstrap is merged, for the agent to apply to the Envoy bootstrap it writes.
import { clone } from "@bufbuild/protobuf";
import { bootstrap, core } from "../../api/index.ts";
import { isMergeOperation, listMerge, mergeMessage } from "./merge.ts";
import type { PatchSet } from "./patch-set.ts";
import { envoyFilterStatus } from "./status.ts";

/** The extension configs EXTENSION_CONFIG ADD patches add, for the names asked for. */
export function insertedExtensionConfigs(set: PatchSet, names: readonly string[]): core.TypedExtensionConfig[] {
  const wanted = new Set(names);
  const added: core.TypedExtensionConfig[] = [];
  for (const patch of set.of("EXTENSION_CONFIG")) {
    if (patch.operation !== "ADD") continue;
    const config = patch.value as core.TypedExtensionConfig;
    const applies = wanted.has(config.name);
    envoyFilterStatus.record(patch, applies);
    if (applies) added.push(clone(core.TypedExtensionConfigSchema, config));
  }
  return added;
}

/** The bootstrap with BOOTSTRAP MERGE patches applied (a copy; the argument is left alone). */
export function applyBootstrapPatches(set: PatchSet, base: bootstrap.Bootstrap): bootstrap.Bootstrap {
  const result = clone(bootstrap.BootstrapSchema, base);
  for (const patch of set.of("BOOTSTRAP")) {
    const applies = isMergeOperation(patch.operation);
    if (applies)
      mergeMessage(bootstrap.BootstrapSchema, result, patch.value as bootstrap.Bootstrap, listMerge(patch.operation));
    envoyFilterStatus.record(patch, applies);
  }
  return result;
}
