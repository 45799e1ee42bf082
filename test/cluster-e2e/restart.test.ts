// sluiced against the real cluster across a restart of the API server (issue 25), on a cluster of
// its own (a restart would disrupt other users of a shared one): the echo mesh as API objects,
// bin/sluiced.js with --kubeconfig, a grpc-js-xds client in this process and grpc-go's as a child
// process. While the API server is down and after it is back the clients keep their routes; an edit
// made after the restart reaches both, and nothing sluiced held is lost in its relist.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client, credentials } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { Cluster, clusterSkipReason } from "../cluster/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";
import { type Backend, tally } from "../proxyless/echo.ts";
import {
  addressSkipReason,
  backendAddresses,
  backendOn,
  bootstrap,
  createEchoMesh,
  ECHO_PORT,
  echoHost,
  echoRoutes,
  eventually,
  GoClient,
  patchRoutes,
  type Sluiced,
  show,
  skipOrFail,
  startSluiced,
} from "./mesh.ts";

const { skip, missingOnCi } = skipOrFail(
  () => clusterSkipReason() ?? peersSkipReason("grpc-go-xds") ?? addressSkipReason(),
);

describe("sluiced across a restart of the real API server", { skip: skip ?? false }, () => {
  let cluster: Cluster;
  let ns: string;
  let v1: Backend;
  let v2: Backend;
  let sluiced: Sluiced;
  let jsClient: Client;
  let goClient: GoClient;

  const js = (n: number) => tally(jsClient, n, {}, 10);
  const only = (m: Map<string, number>, answer: string) => m.size === 1 && m.has(answer);
  const hosts = async () => ((await sluiced.debug("registryz")) as { hostname: string }[]).map((s) => s.hostname);
  /** The namespace's config objects sluiced holds, as `Kind/name`. */
  const configs = async () =>
    ((await sluiced.debug("configz")) as { kind: string; metadata?: { name?: string; namespace?: string } }[])
      .filter((c) => c.metadata?.namespace === ns)
      .map((c) => `${c.kind}/${c.metadata?.name}`)
      .sort();

  before(async () => {
    if (missingOnCi) throw missingOnCi;
    cluster = await Cluster.start();
    ns = await cluster.namespace("sluiced-restart");
    const [a1, a2] = backendAddresses();
    v1 = await backendOn("v1", a1);
    v2 = await backendOn("v2", a2);
    await createEchoMesh(
      cluster,
      ns,
      [
        { version: "v1", backend: v1, address: a1 },
        { version: "v2", backend: v2, address: a2 },
      ],
      echoRoutes(ns, 100, 0),
    );
    sluiced = await startSluiced(cluster.kubeconfigPath);
    const boot = bootstrap(sluiced.grpcAddress, ns);
    process.env.GRPC_XDS_BOOTSTRAP_CONFIG = boot;
    grpcXds.register();
    const target = `${echoHost(ns)}:${ECHO_PORT}`;
    jsClient = new Client(`xds:///${target}`, credentials.createInsecure());
    goClient = GoClient.start(requirePeer("grpc-go-xds"), boot, target);
    await eventually("grpc-js to be routed to v1", async () => {
      const m = await js(10);
      return { ok: only(m, "v1"), seen: show(m) };
    });
    await eventually("grpc-go to be routed to v1", async () => {
      const m = await goClient.next(10);
      return { ok: only(m, "v1"), seen: show(m) };
    });
  });

  after(async () => {
    jsClient?.close();
    await goClient?.stop();
    await sluiced?.stop();
    v1?.stop();
    v2?.stop();
    await cluster?.stop();
  });

  it("keeps serving through the restart, loses nothing, and follows an edit made after it", async (t) => {
    // configz lists the Istio config (as istiod's); the registry holds the Service, and its Pods and
    // slices show in the routing below.
    const held = await configs();
    assert.deepEqual(
      held.filter((k) => /^(VirtualService|DestinationRule)\//.test(k)),
      ["DestinationRule/echo", "VirtualService/echo"],
    );
    assert.ok((await hosts()).includes(echoHost(ns)));
    const started = performance.now();
    await cluster.restartApiServer();
    t.diagnostic(`API server restarted in ${Math.round(performance.now() - started) / 1000} s`);

    // The clients are routed as before (sluiced keeps what it holds while its watches fail and relists).
    const jsCounts = await js(20);
    assert.ok(only(jsCounts, "v1"), `grpc-js after the restart: ${show(jsCounts)}`);
    const goCounts = await goClient.next(20);
    assert.ok(only(goCounts, "v1"), `grpc-go after the restart: ${show(goCounts)}\n${sluiced.tail(15)}`);

    // An edit made after the restart reaches both clients (sluiced's watches are back).
    const edited = performance.now();
    await patchRoutes(cluster, ns, echoRoutes(ns, 0, 100));
    await eventually("grpc-js to follow the edit made after the restart", async () => {
      const m = await js(10);
      return { ok: only(m, "v2"), seen: show(m) };
    });
    await eventually("grpc-go to follow the edit made after the restart", async () => {
      const m = await goClient.next(10);
      return { ok: only(m, "v2"), seen: show(m) };
    });
    t.diagnostic(`both clients followed the edit ${Math.round(performance.now() - edited) / 1000} s after it`);

    // Nothing was lost in the relist: the same objects, the service still registered.
    assert.deepEqual(await configs(), held);
    assert.ok((await hosts()).includes(echoHost(ns)));
  });
});
