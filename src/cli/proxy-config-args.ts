// The arguments of `sluice proxy-config`, shared by its flags (proxy-config-command.ts) and what runs
// it (proxy-config.ts).
import type { ControlPlaneArgs } from "./control-plane-options.ts";

export const OUTPUT_FORMATS = ["short", "json", "yaml"] as const;
export type ProxyConfigOutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Where a command reads a proxy's config dump from. */
export interface ProxyDumpArgs extends ControlPlaneArgs {
  proxy?: string;
  file?: string;
  "proxy-admin-address"?: string;
  "monitoring-address"?: string;
  namespace?: string;
}

export type Kind = "cluster" | "listener" | "route" | "endpoint" | "secret" | "bootstrap" | "ecds" | "all";
