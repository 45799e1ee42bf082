import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, beforeEach, describe, test } from "node:test";
import { Cluster, clusterSkipReason, sharedCluster } from "../../test/cluster/index.ts";
import { KINDS } from "../config/kinds.ts";
import type { gatewayapi, VirtualService } from "../config/types/index.ts";
import {
  gatewayApiClients,
  istioClients,
  KubeApiError,
  KubeConfig,
  kindClient,
  type NamespacedClient,
  type WatchEventType,
} from "./kube.ts";

const skip = clusterSkipReason();

let cluster: Cluster;
before(async () => {
  if (!skip) cluster = await sharedCluster();
});

function virtualService(name: string, namespace: string, labels: Record<string, string> = {}): VirtualService {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name, namespace, labels },
    spec: { hosts: [name], http: [{ route: [{ destination: { host: name } }] }] },
  };
}

function gatewayClass(name: string): gatewayapi.GatewayClass {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name },
    spec: { controllerName: "istio.io/gateway-controller" },
  };
}

/** A Gateway API condition, with every field its CRD requires. */
function gatewayCondition(type: string) {
  return { type, status: "True", reason: type, message: "", lastTransitionTime: "2026-12-01T00:00:00Z" };
}

/** Rejects-matcher: a KubeApiError with this code, reason and exact message. */
function apiError(code: number, reason: string, message: string) {
  return (err: unknown) => {
    assert.ok(err instanceof KubeApiError, String(err));
    assert.equal(err.message, message);
    assert.equal(err.code, code);
    assert.equal(err.reason, reason);
    return true;
  };
}

/** `promise`, or a rejection naming `what` if it has not settled in 30 s. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 30_000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

describe("a namespaced Istio kind (VirtualService)", { skip }, () => {
  let virtualServices: NamespacedClient<VirtualService>;
  /** This test's namespaces, stand-ins for "default" and "prod". */
  let ns: string;
  let prod: string;
  /** The names in a list, of this test's namespaces only (others' tests share the cluster). */
  const names = (list: { items: VirtualService[] }) =>
    list.items
      .filter((vs) => vs.metadata.namespace === ns || vs.metadata.namespace === prod)
      .map((vs) => vs.metadata.name)
      .sort();
  beforeEach(async () => {
    virtualServices = istioClients(cluster.kubeConfig()).virtualServices;
    ns = await cluster.namespace("default");
    prod = await cluster.namespace("prod");
  });

  test("create, get, list (one namespace, all, by label), update, patch, delete", async () => {
    const created = await virtualServices.create(virtualService("reviews", ns, { app: "reviews" }));
    assert.equal(created.metadata.namespace, ns);
    assert.ok(created.metadata.resourceVersion);
    await virtualServices.create(virtualService("ratings", prod, { app: "ratings" }));

    const got = await virtualServices.get(ns, "reviews");
    assert.deepEqual(got.spec?.hosts, ["reviews"]);
    assert.equal(got.apiVersion, "networking.istio.io/v1");

    assert.deepEqual(names(await virtualServices.list(ns)), ["reviews"]);
    assert.deepEqual(names(await virtualServices.list()), ["ratings", "reviews"]);
    assert.deepEqual(names(await virtualServices.list(undefined, { labelSelector: "app=ratings" })), ["ratings"]);
    const listed = await virtualServices.list();
    assert.match(listed.resourceVersion, /^\d+$/);
    assert.ok(Number(listed.resourceVersion) >= Number(created.metadata.resourceVersion));

    const updated = await virtualServices.update({ ...got, spec: { ...got.spec, hosts: ["reviews.default"] } });
    assert.deepEqual(updated.spec?.hosts, ["reviews.default"]);
    assert.equal(updated.metadata.generation, 2);

    const merged = await virtualServices.patch(ns, "reviews", { metadata: { labels: { tier: "web" } } });
    assert.deepEqual(merged.metadata.labels, { app: "reviews", tier: "web" });
    const patched = await virtualServices.patch(
      ns,
      "reviews",
      [
        { op: "test", path: "/spec/hosts/0", value: "reviews.default" },
        { op: "add", path: "/spec/gateways", value: ["mesh"] },
      ],
      "json",
    );
    assert.deepEqual(patched.spec?.gateways, ["mesh"]);

    await virtualServices.delete(ns, "reviews");
    assert.deepEqual(names(await virtualServices.list()), ["ratings"]);
  });

  test("status is written through the status subresource, and update leaves it alone", async () => {
    const created = await virtualServices.create(virtualService("reviews", ns));
    // The status subresource ignores the spec: only the status changes.
    const withStatus = await virtualServices.updateStatus({
      ...created,
      spec: { ...created.spec, hosts: ["ignored"] },
      status: { observedGeneration: 1 },
    });
    assert.deepEqual(withStatus.status, { observedGeneration: 1 });
    assert.deepEqual(withStatus.spec?.hosts, ["reviews"]);
    assert.equal(withStatus.metadata.generation, 1);

    const patched = await virtualServices.patchStatus(ns, "reviews", { status: { validationMessages: [] } });
    assert.deepEqual(patched.status, { observedGeneration: 1, validationMessages: [] });

    // The main resource ignores status: an update without one, or with another, keeps what is stored.
    const { status: _status, ...withoutStatus } = patched;
    const updated = await virtualServices.update(withoutStatus);
    assert.deepEqual(updated.status, { observedGeneration: 1, validationMessages: [] });
    const overwritten = await virtualServices.update({ ...updated, status: { observedGeneration: 9 } });
    assert.deepEqual(overwritten.status, { observedGeneration: 1, validationMessages: [] });
    assert.deepEqual((await virtualServices.get(ns, "reviews")).status, {
      observedGeneration: 1,
      validationMessages: [],
    });
  });

  test("a failed call names the verb, the kind, the object and the server's status", async () => {
    await assert.rejects(
      virtualServices.get(ns, "missing"),
      apiError(
        404,
        "NotFound",
        `get VirtualService ${ns}/missing: virtualservices.networking.istio.io "missing" not found (404 NotFound)`,
      ),
    );
    const created = await virtualServices.create(virtualService("reviews", ns));
    await assert.rejects(
      virtualServices.create(virtualService("reviews", ns)),
      apiError(
        409,
        "AlreadyExists",
        `create VirtualService ${ns}/reviews: virtualservices.networking.istio.io "reviews" already exists (409 AlreadyExists)`,
      ),
    );
    await virtualServices.patch(ns, "reviews", { metadata: { labels: { changed: "yes" } } });
    // `created` has an old resourceVersion now.
    await assert.rejects(virtualServices.update(created), (err: unknown) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.reason, "Conflict");
      assert.equal(
        err.message,
        `update VirtualService ${ns}/reviews: Operation cannot be fulfilled on virtualservices.networking.istio.io "reviews": the object has been modified; please apply your changes to the latest version and try again (409 Conflict)`,
      );
      return true;
    });
    await assert.rejects(
      virtualServices.list(undefined, { labelSelector: "app in (" }),
      (err: unknown) =>
        err instanceof KubeApiError &&
        /^list VirtualService in all namespaces: .*\(400 BadRequest\)$/.test(err.message),
    );
    await assert.rejects(
      virtualServices.patch(ns, "reviews", [{ op: "remove", path: "/spec/nothing" }], "json"),
      // The real server's message for a JSON patch that does not apply.
      apiError(
        422,
        "Invalid",
        `patch VirtualService ${ns}/reviews: the server rejected our request due to an error in our request (422 Invalid)`,
      ),
    );
  });

  test("a call that reaches no server names the object; the token never shows", async () => {
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: "gone", server: "http://127.0.0.1:1", skipTLSVerify: true }],
      users: [{ name: "someone", token: "secret-token" }],
      contexts: [{ name: "gone", cluster: "gone", user: "someone" }],
      currentContext: "gone",
    });
    await assert.rejects(istioClients(unreachable).virtualServices.delete("default", "reviews"), (err: unknown) => {
      assert.ok(err instanceof Error && !(err instanceof KubeApiError));
      assert.match(err.message, /^delete VirtualService default\/reviews: /);
      assert.doesNotMatch(err.message, /secret-token/);
      return true;
    });
  });

  test("a watch sees adds, updates and deletes, from a list's resourceVersion, until stopped", async () => {
    await virtualServices.create(virtualService("before", ns));
    const { resourceVersion } = await virtualServices.list(ns);
    const events: string[] = [];
    const watch = await virtualServices.watch(
      ns,
      (type, vs) => events.push(`${type} ${vs.metadata.name} ${vs.spec?.hosts?.join(",")}`),
      { resourceVersion },
    );
    const created = await virtualServices.create(virtualService("reviews", ns));
    await virtualServices.create(virtualService("elsewhere", prod));
    await virtualServices.update({ ...created, spec: { hosts: ["reviews.default"] } });
    await virtualServices.delete(ns, "reviews");
    await until(() => events.length === 3, "three events");
    assert.deepEqual(events, [
      "ADDED reviews reviews",
      "MODIFIED reviews reviews.default",
      "DELETED reviews reviews.default",
    ]);

    watch.stop();
    await within(watch.done, "the stopped watch to end");
  });

  test("a watch without a resourceVersion starts with the current objects; a label selector filters", async () => {
    // Across all namespaces: the selector names this test's objects only.
    const mine = { test: ns };
    await virtualServices.create(virtualService("reviews", ns, { app: "reviews", ...mine }));
    await virtualServices.create(virtualService("ratings", prod, { app: "ratings", ...mine }));
    const events: [WatchEventType, string | undefined][] = [];
    const watch = await virtualServices.watch(undefined, (type, vs) => events.push([type, vs.metadata.name]), {
      labelSelector: `app=ratings,test=${ns}`,
    });
    await virtualServices.patch(prod, "ratings", { metadata: { labels: { app: "other" } } });
    await until(() => events.length === 2, "two events");
    // An object that stops matching the selector is DELETED from the watch's view.
    assert.deepEqual(events, [
      ["ADDED", "ratings"],
      ["DELETED", "ratings"],
    ]);
    watch.stop();
    await within(watch.done, "the stopped watch to end");
  });

  test("a watch the server ends with an error rejects `done` with it", async (t) => {
    // Compacting etcd disrupts a cluster: this test has one of its own, whose API server reads
    // watches from etcd (no watch cache) so a compacted resourceVersion is answered 410 Expired.
    const own = await Cluster.start({ apiServerArgs: ["--watch-cache=false"] });
    t.after(() => own.stop());
    const ownVirtualServices = istioClients(own.kubeConfig()).virtualServices;
    const namespace = await own.namespace("default");
    const { resourceVersion } = await ownVirtualServices.list();
    await ownVirtualServices.create(virtualService("reviews", namespace));
    // Two changes: the compaction revision is the last one's, so the first one's is gone too.
    await ownVirtualServices.patch(namespace, "reviews", { metadata: { labels: { changed: "yes" } } });
    await own.compactEtcd();
    const watch = await ownVirtualServices.watch(undefined, () => {}, { resourceVersion });
    await assert.rejects(within(watch.done, "the watch to end"), (err: unknown) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.code, 410);
      assert.match(
        err.message,
        /^watch VirtualService in all namespaces: The resourceVersion for the provided watch is too old\. \(410 Expired\)$/,
      );
      return true;
    });
  });

  test("a handler that throws ends the watch with its error", async () => {
    const watch = await virtualServices.watch(ns, () => {
      throw new Error("handler failed");
    });
    await virtualServices.create(virtualService("reviews", ns));
    await assert.rejects(within(watch.done, "the watch to end"), /^Error: handler failed$/);
  });
});

describe("a cluster-scoped Gateway API kind (GatewayClass)", { skip }, () => {
  test("every verb, with no namespace", async () => {
    const { gatewayClasses } = gatewayApiClients(cluster.kubeConfig());
    // Cluster-scoped: a name of its own (the cluster is shared). A namespaced path for a
    // cluster-scoped kind is a 404 on a real API server, so every call below succeeding shows the
    // client used the cluster-scoped paths.
    const name = `sluice-${randomBytes(4).toString("hex")}`;
    const events: string[] = [];
    const watch = await gatewayClasses.watch((type, gc) => {
      if (gc.metadata.name === name) events.push(`${type} ${gc.metadata.name}`);
    });

    const created = await gatewayClasses.create(gatewayClass(name));
    assert.equal(created.metadata.namespace, undefined);
    assert.equal((await gatewayClasses.get(name)).spec?.controllerName, "istio.io/gateway-controller");
    assert.deepEqual(
      (await gatewayClasses.list()).items.map((gc) => gc.metadata.name).filter((n) => n === name),
      [name],
    );
    const updated = await gatewayClasses.update({ ...created, spec: { ...created.spec!, description: "mesh" } });
    assert.equal(updated.spec?.description, "mesh");
    const patched = await gatewayClasses.patch(name, { metadata: { labels: { team: "mesh" } } });
    assert.deepEqual(patched.metadata.labels, { team: "mesh" });

    const accepted = { conditions: [gatewayCondition("Accepted")] };
    const withStatus = await gatewayClasses.updateStatus({ ...patched, status: accepted });
    assert.deepEqual(withStatus.status, accepted);
    const patchedStatus = await gatewayClasses.patchStatus(
      name,
      [{ op: "add", path: "/status/conditions/-", value: gatewayCondition("SupportedVersion") }],
      "json",
    );
    assert.deepEqual(patchedStatus.status, {
      conditions: [gatewayCondition("Accepted"), gatewayCondition("SupportedVersion")],
    });

    await gatewayClasses.delete(name);
    await assert.rejects(
      gatewayClasses.get(name),
      apiError(
        404,
        "NotFound",
        `get GatewayClass ${name}: gatewayclasses.gateway.networking.k8s.io "${name}" not found (404 NotFound)`,
      ),
    );
    await until(() => events.length === 6, "six events");
    assert.deepEqual(events, [
      `ADDED ${name}`,
      `MODIFIED ${name}`,
      `MODIFIED ${name}`,
      `MODIFIED ${name}`,
      `MODIFIED ${name}`,
      `DELETED ${name}`,
    ]);
    watch.stop();
    await within(watch.done, "the stopped watch to end");
  });
});

test("every Istio and Gateway API kind of the registry has its client, with the kind's scope", () => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "none", server: "https://127.0.0.1:1" }],
    users: [{ name: "none" }],
    contexts: [{ name: "none", cluster: "none", user: "none" }],
    currentContext: "none",
  });
  const clients = [...Object.values(istioClients(kubeConfig)), ...Object.values(gatewayApiClients(kubeConfig))];
  const wanted = KINDS.filter((k) => k.family !== "kubernetes");
  assert.deepEqual(
    clients.map((c) => c.kind).sort((a, b) => a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group)),
    [...wanted].sort((a, b) => a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group)),
  );
  for (const client of clients) {
    assert.equal(client.namespaced, client.kind.namespaced, client.kind.kind);
    assert.equal(client.apiVersion, `${client.kind.group}/${client.kind.preferredVersion}`);
  }
});

test("kindClient: any registry kind at a version it serves, built-ins included", { skip }, async () => {
  const kubeConfig = cluster.kubeConfig();
  const ns = await cluster.namespace("default");
  const older = kindClient<VirtualService>(kubeConfig, "networking.istio.io/v1beta1", "VirtualService");
  assert.ok(older.namespaced);
  await older.create({ ...virtualService("old", ns), apiVersion: "networking.istio.io/v1beta1" });
  assert.equal((await older.get(ns, "old")).apiVersion, "networking.istio.io/v1beta1");
  await older.delete(ns, "old");

  const services = kindClient(kubeConfig, "v1", "Service");
  assert.ok(services.namespaced);
  await services.create({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "reviews", namespace: ns },
    spec: { ports: [{ port: 9080 }] },
  });
  // Lists of built-in kinds leave apiVersion and kind off their items; the client puts them back.
  const listed = (await services.list(ns)).items[0];
  assert.equal(listed.apiVersion, "v1");
  assert.equal(listed.kind, "Service");

  const namespaces = kindClient(kubeConfig, "v1", "Namespace");
  assert.equal(namespaces.namespaced, false);

  assert.throws(() => kindClient(kubeConfig, "networking.istio.io/v2", "VirtualService"), /no kind VirtualService/);
});
