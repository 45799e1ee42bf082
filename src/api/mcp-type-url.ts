// The type URLs of config over xDS (Istio's apigen, "MCP over xDS"): a kind is named
// `group/version/kind` (`networking.istio.io/v1/VirtualService`, `core/v1/Service`). The `api`
// generator (xds/generators/api.ts) serves them; the xDS config source (sources/xds/) asks for them.

/** Istio writes the core API group ("") as `core` in type URLs. */
const CORE_GROUP = "core";

export function apiTypeUrl(group: string, version: string, kind: string): string {
  return `${group === "" ? CORE_GROUP : group}/${version}/${kind}`;
}

/** The kind a `group/version/kind` type URL names, if it has three parts. */
export function parseApiTypeUrl(typeUrl: string): { group: string; version: string; kind: string } | undefined {
  const parts = typeUrl.split("/");
  if (parts.length !== 3 || parts.some((p) => p === "")) return undefined;
  const [group, version, kind] = parts;
  return { group: group === CORE_GROUP ? "" : group, version, kind };
}
