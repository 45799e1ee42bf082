// `sluice proxy-status <proxy> --file <envoy config dump>` (istioctl's Comparator): the control
// plane's config dump for the proxy against the proxy's own, clusters, listeners and routes each
// sorted by name and without versions, as unified diffs with 7 lines of context.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { admin } from "../api/index.ts";
import { unifiedDiff } from "./envoyfilter-diff.ts";
import { goJson, protoJson } from "./proxy-config-format.ts";
import { type ConfigDump, list, obj, text } from "./proxy-config-writer.ts";

const CONTEXT = 7;

function section(dump: ConfigDump, kind: string): JsonObject | undefined {
  return dump.configs.find((c) => c["@type"] === `type.googleapis.com/envoy.admin.v3.${kind}`);
}

function byName(name: (v: JsonValue) => string) {
  return (a: JsonValue, b: JsonValue) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);
}

function withoutKeys(value: JsonValue, keys: string[]): JsonObject {
  const copy: JsonObject = { ...(value as JsonObject) };
  for (const key of keys) delete copy[key];
  return copy;
}

const VERSION_KEYS = ["version_info", "versionInfo", "last_updated", "lastUpdated"];

function clustersText(dump: ConfigDump): string {
  const s = section(dump, "ClustersConfigDump");
  if (!s) return "config dump has no ClustersConfigDump";
  const clusters = list(s, "dynamic_active_clusters")
    .sort(byName((c) => text(obj(c, "cluster"), "name")))
    .map((c) => withoutKeys(c, VERSION_KEYS));
  return goJson(protoJson(admin.ClustersConfigDumpSchema, { dynamicActiveClusters: clusters }));
}

function listenersText(dump: ConfigDump): string {
  const s = section(dump, "ListenersConfigDump");
  if (!s) return "config dump has no ListenersConfigDump";
  const listeners = list(s, "dynamic_listeners")
    .sort(byName((l) => text(l, "name")))
    .map((l) => {
      const active = obj(l, "active_state");
      // Envoy names the dynamic listener; the control plane may not: istioctl leaves the name out.
      const stripped = withoutKeys(l, ["name", "active_state", "activeState"]);
      return active ? { ...stripped, activeState: withoutKeys(active, VERSION_KEYS) } : stripped;
    });
  return goJson(protoJson(admin.ListenersConfigDumpSchema, { dynamicListeners: listeners }));
}

function routesText(dump: ConfigDump): string {
  const s = section(dump, "RoutesConfigDump");
  if (!s) return "config dump has no RoutesConfigDump";
  const routes = list(s, "dynamic_route_configs")
    .sort(byName((r) => text(obj(r, "route_config"), "name")))
    .map((r) => {
      const config = obj(r, "route_config") ?? {};
      const vhosts = [...list(config, "virtual_hosts")].sort(byName((v) => text(v, "name")));
      return {
        ...withoutKeys(r, [...VERSION_KEYS, "route_config"]),
        routeConfig: { ...withoutKeys(config, ["virtual_hosts"]), virtualHosts: vhosts },
      };
    });
  return goJson(protoJson(admin.RoutesConfigDumpSchema, { dynamicRouteConfigs: routes }));
}

/** The latest `last_updated` of the proxy's dynamic routes, as Go's time.RFC1123 in UTC. */
function routesLoadedAt(dump: ConfigDump): string {
  const times = list(section(dump, "RoutesConfigDump"), "dynamic_route_configs")
    .map((r) => text(r, "last_updated"))
    .filter((t) => t !== "")
    .map((t) => new Date(t));
  if (times.length === 0) return "";
  const latest = new Date(Math.max(...times.map((t) => t.getTime())));
  return ` (RDS last loaded at ${latest.toUTCString().replace("GMT", "UTC")})`;
}

/** istioctl's comparison output for the control plane's dump of a proxy and the proxy's own. */
export function compareDumps(controlPlane: ConfigDump, proxy: ConfigDump): string {
  const parts: [string, (d: ConfigDump) => string, string][] = [
    ["Clusters", clustersText, ""],
    ["Listeners", listenersText, ""],
    ["Routes", routesText, routesLoadedAt(proxy)],
  ];
  return parts
    .map(([what, render, suffix]) => {
      const diff = unifiedDiff(
        `${render(controlPlane)}\n`,
        `${render(proxy)}\n`,
        [`Istiod ${what}`, `Envoy ${what}`],
        CONTEXT,
      );
      return diff === "" ? `${what} Match${suffix}\n` : `${what} Don't Match${suffix}\n${diff}\n`;
    })
    .join("");
}
