// The xDS config source: config from another control plane over ADS (MCP over xDS).
export { fromMcpResource } from "./convert.ts";
export { XdsSource, type XdsSourceOptions, type XdsSourceTls } from "./source.ts";
