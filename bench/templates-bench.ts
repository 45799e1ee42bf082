// Istio's BenchmarkInitPushContext and Cluster/Listener/RouteGeneration over the `http` template with
// 100 services, for the benchmark sidecar. Istio runs them with the XDS cache off, so generation
// here gets a fresh push context each run (Sluice's per-push caches start empty), built untimed. The
// push context builds its indexes lazily, so the first generation on a push pays for the ones it reads.
import type { PushContext } from "../src/model/index.ts";
import { buildClusters } from "../src/xds/generators/cds.ts";
import { buildListeners } from "../src/xds/generators/lds.ts";
import { buildRouteConfiguration, routeNames } from "../src/xds/generators/rds.ts";
import { storePush } from "../src/xds/index.ts";
import { measure } from "./measure.ts";
import type { BenchResult } from "./run.ts";
import { BENCH_MESH, benchProxy, DOMAIN_SUFFIX, template, templateState } from "./templates.ts";

const RUNS = 50;

export function benchTemplates(): BenchResult[] {
  const { store, registry } = templateState(template("http").render({ services: 100, instances: 0 }));
  const proxy = benchProxy("sidecar");
  const newPush = () => storePush(store, registry, BENCH_MESH, DOMAIN_SUFFIX);
  /** Times `generate` on a fresh push per run. */
  const generation = (generate: (push: PushContext) => unknown) => {
    const pushes = Array.from({ length: RUNS }, newPush);
    return measure(RUNS, (run) => generate(pushes[run]));
  };
  const listeners = buildListeners(newPush(), proxy, registry);
  if (listeners.length === 0) throw new Error("the http template gave the sidecar no listeners");
  const names = routeNames(listeners);

  const name = "templates: http, 100 services";
  return [
    { name: `${name}, push-context build`, ...measure(RUNS, newPush) },
    { name: `${name}, CDS generation (sidecar)`, ...generation((push) => buildClusters(push, proxy, registry)) },
    { name: `${name}, LDS generation (sidecar)`, ...generation((push) => buildListeners(push, proxy, registry)) },
    {
      name: `${name}, RDS generation (sidecar)`,
      ...generation((push) => names.map((route) => buildRouteConfiguration(push, proxy, route))),
    },
  ];
}
