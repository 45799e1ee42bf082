// The arguments of `sluice proxy-status`, shared by its flags (proxy-status.ts) and what runs it
// (proxy-status-run.ts, proxy-status-writer.ts).
import type { ControlPlaneArgs } from "./control-plane-options.ts";

export const STATUS_OUTPUT_FORMATS = ["table", "json", "yaml"] as const;
export type StatusOutputFormat = (typeof STATUS_OUTPUT_FORMATS)[number];

export interface ProxyStatusArgs extends ControlPlaneArgs {
  proxy?: string;
  file?: string;
  output: StatusOutputFormat;
  verbose: boolean;
  namespace?: string;
}
