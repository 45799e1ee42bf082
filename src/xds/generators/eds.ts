// EDS: one ClusterLoadAssignment per subscribed cluster (Istio's pilot/pkg/xds/eds.go). A full push
// answers every subscribed name; an incremental (endpoint) push answers only the clusters of the
// hostnames it names, which SotW EDS allows.
import {
  assignmentClassKey,
  endpointView,
  loadAssignment,
  type ProxyClassTable,
  parseEdsClusterName,
  proxyClassValue,
  type XdsCache,
  type XdsResource,
} from "../../configgen/index.ts";
import type { PushSnapshot } from "../../model/index.ts";
import type { EndpointLookup } from "../../registry/index.ts";
import { weakTable } from "../../util/index.ts";
import { buildNamed, type Generator, type ResourceError } from "../generator.ts";
import { changedHostnames, edsNeedsPush, waypointNeedsPush } from "./needs-push.ts";

// Per push and proxy class, the assignments answering each ask, and the names whose assignment threw.
// A full push asks for the watch's own set, which every watch naming the same names in the same order
// shares (the server's name-sets.ts), so the set itself keys it; an incremental one asks for a list of
// the changed hosts' names, keyed by its spelling.
const CLASS_RESPONSES: ProxyClassTable<
  Map<ReadonlySet<string> | string, { resources: XdsResource[]; errors: ResourceError[] }>
> = weakTable("eds/classResponses");

// Per set of watched names, the names by the hostname of their cluster. A watch's set is replaced
// when it changes, never changed in place, so an endpoint change finds a proxy's names of the changed
// hosts without parsing each name it watches (1,000 a proxy unscoped) in every push.
const NAMES_BY_HOST = weakTable<ReadonlySet<string>, Map<string, string[]>>("eds/namesByHost");

/** The watched names whose cluster is of one of `hosts`, in the order they are watched. */
function namesOfHosts(cache: XdsCache, watched: ReadonlySet<string>, hosts: ReadonlySet<string>): string[] {
  const table = cache.weak(NAMES_BY_HOST);
  let byHost = table.get(watched);
  if (!byHost) {
    byHost = new Map();
    for (const name of watched) {
      const host = parseEdsClusterName(cache, name)?.hostname;
      if (host === undefined) continue;
      const names = byHost.get(host);
      if (names) names.push(name);
      else byHost.set(host, [name]);
    }
    table.set(watched, byHost);
  }
  const found: string[] = [];
  let matched = 0;
  for (const host of hosts) {
    const names = byHost.get(host);
    if (!names) continue;
    found.push(...names);
    matched++;
  }
  if (matched < 2) return found;
  const wanted = new Set(found);
  return [...watched].filter((name) => wanted.has(name));
}

export function edsGenerator(endpoints: EndpointLookup, cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      if (!edsNeedsPush(req)) return undefined;
      // A waypoint's attached addresses changed: all its assignments, as its clusters were rebuilt.
      const names =
        req.full || waypointNeedsPush(req, proxy)
          ? watched.resourceNames
          : namesOfHosts(cache, watched.resourceNames, changedHostnames(req));
      if ((Array.isArray(names) ? names.length : names.size) === 0) return undefined;
      const scope = req.push.snapshot.sidecarScope(proxy);
      // An assignment that throws is left out (an error of the result); the others go.
      const build = () => {
        const view = { scope, endpointView: endpointView(cache, proxy) };
        return buildNamed(names, (name) => loadAssignment(cache, req.push, proxy, view, endpoints, name));
      };
      // Proxies of a class asking for the same names in the same order get the same resources array;
      // not waypoints, whose assignments read the ambient index live, which an address push changes
      // within one push context.
      let answer: ReturnType<typeof build> | undefined;
      if (proxy.type === "waypoint") answer = build();
      else {
        const classKey = assignmentClassKey(cache, req.push, scope, proxy);
        const byNames = proxyClassValue(cache, CLASS_RESPONSES, req.push, endpoints, scope, classKey, () => new Map());
        const namesKey = Array.isArray(names) ? JSON.stringify(names) : names;
        answer = byNames.get(namesKey);
        if (!answer) {
          answer = build();
          byNames.set(namesKey, answer);
        }
      }
      return { resources: answer.resources, errors: answer.errors, logDetails: { incremental: !req.full } };
    },
  };
}
