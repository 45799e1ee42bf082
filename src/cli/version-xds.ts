// What `sluice version` learns from the control plane over xDS: its identifier, and the data plane's
// versions (each connected proxy's ISTIO_VERSION, from syncz). Loaded only when version asks a
// control plane, so that the client's version alone loads no xDS client.
import { csds, unpackAny } from "../api/index.ts";
import { SYNCZ_TYPE_URL } from "../xds/generators/status.ts";
import type { ControlPlaneArgs } from "./control-plane-options.ts";
import { controlPlaneId } from "./proxy-status-writer.ts";
import { requestControlPlanes } from "./xds-client.ts";

export interface XdsVersions {
  /** The identifiers of the control planes that answered, comma-separated. */
  controlPlaneId: string;
  /** Proxies per ISTIO_VERSION. */
  dataPlane: Record<string, number>;
}

/** Asks the control planes the flags reach for their syncz. */
export async function xdsVersions(argv: ControlPlaneArgs): Promise<XdsVersions> {
  const responses = await requestControlPlanes(argv, SYNCZ_TYPE_URL);
  const ids = [...new Set(responses.map(controlPlaneId))];
  const dataPlane: Record<string, number> = {};
  for (const r of responses.flatMap((response) => response.resources)) {
    const version = unpackAny(r, csds.ClientConfigSchema)?.node?.metadata?.ISTIO_VERSION;
    const key = typeof version === "string" && version !== "" ? version : "unknown";
    dataPlane[key] = (dataPlane[key] ?? 0) + 1;
  }
  return { controlPlaneId: ids.join(", "), dataPlane };
}
