// The control plane identifier every xDS response carries (Envoy's ControlPlane.identifier), in
// istiod's form: JSON {"Component":"istiod","ID":<pod name>,"Info":<build info>}. istioctl's
// proxy-status shows the ID in its ISTIOD column and its version command reads Info.version; the
// component is "istiod" because sluiced stands in for istiod, and tools look for that name.
import { hostname } from "node:os";
import { SLUICE_REVISION, SLUICE_VERSION } from "../../util/version.ts";

/** Istio's version.BuildInfo as JSON. Sluice has no build stamping, so revision and status are unknown, as in unstamped Istio builds. */
export interface BuildInfo {
  version: string;
  revision: string;
  /** Istio's Go runtime version; here the Node.js one. */
  golang_version: string;
  status: string;
  tag: string;
}

export interface ControlPlaneInstance {
  Component: string;
  ID: string;
  Info: BuildInfo;
}

/** The identifier: ID is $POD_NAME (istiod's), else the host name, so replicas outside Kubernetes differ too. */
export function controlPlaneIdentifier(env: NodeJS.ProcessEnv = process.env, host: string = hostname()): string {
  const instance: ControlPlaneInstance = {
    Component: "istiod",
    ID: env.POD_NAME || host,
    Info: {
      version: SLUICE_VERSION,
      revision: SLUICE_REVISION,
      golang_version: process.version,
      status: "unknown",
      tag: SLUICE_VERSION,
    },
  };
  return JSON.stringify(instance);
}
