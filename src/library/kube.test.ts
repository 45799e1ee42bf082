import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { KubeTestServer } from "../../test/kube-apiserver/index.ts";
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

let server: KubeTestServer;
before(async () => {
  server = await KubeTestServer.start();
});
after(async () => {
  await server.close();
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

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

describe("a namespaced Istio kind (VirtualService)", () => {
  let virtualServices: NamespacedClient<VirtualService>;
  beforeEach(async () => {
    virtualServices = istioClients(server.kubeConfig()).virtualServices;
    for (const vs of (await virtualServices.list()).items) {
      await virtualServices.delete(vs.metadata.namespace ?? "", vs.metadata.name ?? "");
    }
  });

  test("create, get, list (one namespace, all, by label), update, patch, delete", async () => {
    const created = await virtualServices.create(virtualService("reviews", "default", { app: "reviews" }));
    assert.equal(created.metadata.namespace, "default");
    assert.ok(created.metadata.resourceVersion);
    await virtualServices.create(virtualService("ratings", "prod", { app: "ratings" }));

    const got = await virtualServices.get("default", "reviews");
    assert.deepEqual(got.spec?.hosts, ["reviews"]);
    assert.equal(got.apiVersion, "networking.istio.io/v1");

    const names = (list: { items: VirtualService[] }) => list.items.map((vs) => vs.metadata.name).sort();
    assert.deepEqual(names(await virtualServices.list("default")), ["reviews"]);
    assert.deepEqual(names(await virtualServices.list()), ["ratings", "reviews"]);
    assert.deepEqual(names(await virtualServices.list(undefined, { labelSelector: "app=ratings" })), ["ratings"]);
    assert.equal((await virtualServices.list()).resourceVersion, String(server.resourceVersion));

    const updated = await virtualServices.update({ ...got, spec: { ...got.spec, hosts: ["reviews.default"] } });
    assert.deepEqual(updated.spec?.hosts, ["reviews.default"]);
    assert.equal(updated.metadata.generation, 2);

    const merged = await virtualServices.patch("default", "reviews", { metadata: { labels: { tier: "web" } } });
    assert.deepEqual(merged.metadata.labels, { app: "reviews", tier: "web" });
    const patched = await virtualServices.patch(
      "default",
      "reviews",
      [
        { op: "test", path: "/spec/hosts/0", value: "reviews.default" },
        { op: "add", path: "/spec/gateways", value: ["mesh"] },
      ],
      "json",
    );
    assert.deepEqual(patched.spec?.gateways, ["mesh"]);

    await virtualServices.delete("default", "reviews");
    assert.deepEqual(names(await virtualServices.list()), ["ratings"]);
  });

  test("status is written through the status subresource, and update leaves it alone", async () => {
    const created = await virtualServices.create(virtualService("reviews", "default"));
    const withStatus = await virtualServices.updateStatus({ ...created, status: { observedGeneration: 1 } });
    assert.deepEqual(withStatus.status, { observedGeneration: 1 });

    const patched = await virtualServices.patchStatus("default", "reviews", { status: { validationMessages: [] } });
    assert.deepEqual(patched.status, { observedGeneration: 1, validationMessages: [] });

    // The main resource ignores status: an update without one keeps what is stored.
    const { status: _status, ...withoutStatus } = patched;
    const updated = await virtualServices.update(withoutStatus);
    assert.deepEqual(updated.status, { observedGeneration: 1, validationMessages: [] });
    const statusPath = "/apis/networking.istio.io/v1/namespaces/default/virtualservices/reviews/status";
    assert.equal(server.requests.filter((r) => r.path === statusPath).length, 2);
  });

  test("a failed call names the verb, the kind, the object and the server's status", async () => {
    await assert.rejects(
      virtualServices.get("default", "missing"),
      apiError(
        404,
        "NotFound",
        'get VirtualService default/missing: virtualservices.networking.istio.io "missing" not found (404 NotFound)',
      ),
    );
    const created = await virtualServices.create(virtualService("reviews", "default"));
    await assert.rejects(
      virtualServices.create(virtualService("reviews", "default")),
      apiError(
        409,
        "AlreadyExists",
        'create VirtualService default/reviews: virtualservices.networking.istio.io "reviews" already exists (409 AlreadyExists)',
      ),
    );
    await virtualServices.patch("default", "reviews", { metadata: { labels: { changed: "yes" } } });
    // `created` has an old resourceVersion now.
    await assert.rejects(virtualServices.update(created), (err: unknown) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.reason, "Conflict");
      assert.match(
        err.message,
        /^update VirtualService default\/reviews: Operation cannot be fulfilled .* \(409 Conflict\)$/,
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
      virtualServices.patch("default", "reviews", [{ op: "remove", path: "/spec/nothing" }], "json"),
      apiError(
        422,
        "Invalid",
        "patch VirtualService default/reviews: JSON patch: remove of /spec/nothing failed (422 Invalid)",
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
    await virtualServices.create(virtualService("before", "default"));
    const { resourceVersion } = await virtualServices.list("default");
    const events: string[] = [];
    const watch = await virtualServices.watch(
      "default",
      (type, vs) => events.push(`${type} ${vs.metadata.name} ${vs.spec?.hosts?.join(",")}`),
      { resourceVersion },
    );
    const created = await virtualServices.create(virtualService("reviews", "default"));
    await virtualServices.create(virtualService("elsewhere", "prod"));
    await virtualServices.update({ ...created, spec: { hosts: ["reviews.default"] } });
    await virtualServices.delete("default", "reviews");
    await until(() => events.length === 3, "three events");
    assert.deepEqual(events, [
      "ADDED reviews reviews",
      "MODIFIED reviews reviews.default",
      "DELETED reviews reviews.default",
    ]);

    watch.stop();
    await watch.done;
    await until(() => server.openWatches() === 0, "the server to see the watch closed");
  });

  test("a watch without a resourceVersion starts with the current objects; a label selector filters", async () => {
    await virtualServices.create(virtualService("reviews", "default", { app: "reviews" }));
    await virtualServices.create(virtualService("ratings", "prod", { app: "ratings" }));
    const events: [WatchEventType, string | undefined][] = [];
    const watch = await virtualServices.watch(undefined, (type, vs) => events.push([type, vs.metadata.name]), {
      labelSelector: "app=ratings",
    });
    await virtualServices.patch("prod", "ratings", { metadata: { labels: { app: "other" } } });
    await until(() => events.length === 2, "two events");
    // An object that stops matching the selector is DELETED from the watch's view.
    assert.deepEqual(events, [
      ["ADDED", "ratings"],
      ["DELETED", "ratings"],
    ]);
    watch.stop();
    await watch.done;
  });

  test("a watch the server ends with an error rejects `done` with it", async () => {
    const { resourceVersion } = await virtualServices.list();
    await virtualServices.create(virtualService("reviews", "default"));
    server.compactHistory();
    const watch = await virtualServices.watch(undefined, () => {}, { resourceVersion });
    await assert.rejects(watch.done, (err: unknown) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.code, 410);
      assert.match(
        err.message,
        /^watch VirtualService in all namespaces: too old resource version: .* \(410 Expired\)$/,
      );
      return true;
    });
  });

  test("a handler that throws ends the watch with its error", async () => {
    const watch = await virtualServices.watch("default", () => {
      throw new Error("handler failed");
    });
    await virtualServices.create(virtualService("reviews", "default"));
    await assert.rejects(watch.done, /^Error: handler failed$/);
  });
});

describe("a cluster-scoped Gateway API kind (GatewayClass)", () => {
  test("every verb, with no namespace", async () => {
    const { gatewayClasses } = gatewayApiClients(server.kubeConfig());
    const events: string[] = [];
    const watch = await gatewayClasses.watch((type, gc) => events.push(`${type} ${gc.metadata.name}`));

    const created = await gatewayClasses.create(gatewayClass("sluice"));
    assert.equal(created.metadata.namespace, undefined);
    assert.equal((await gatewayClasses.get("sluice")).spec?.controllerName, "istio.io/gateway-controller");
    assert.deepEqual(
      (await gatewayClasses.list()).items.map((gc) => gc.metadata.name),
      ["sluice"],
    );
    const updated = await gatewayClasses.update({ ...created, spec: { ...created.spec!, description: "mesh" } });
    assert.equal(updated.spec?.description, "mesh");
    const patched = await gatewayClasses.patch("sluice", { metadata: { labels: { team: "mesh" } } });
    assert.deepEqual(patched.metadata.labels, { team: "mesh" });

    const accepted = { conditions: [{ type: "Accepted", status: "True" }] };
    const withStatus = await gatewayClasses.updateStatus({ ...patched, status: accepted });
    assert.deepEqual(withStatus.status, accepted);
    const patchedStatus = await gatewayClasses.patchStatus(
      "sluice",
      [{ op: "add", path: "/status/extra", value: 1 }],
      "json",
    );
    assert.deepEqual(patchedStatus.status, { ...accepted, extra: 1 });

    await gatewayClasses.delete("sluice");
    await assert.rejects(
      gatewayClasses.get("sluice"),
      apiError(
        404,
        "NotFound",
        'get GatewayClass sluice: gatewayclasses.gateway.networking.k8s.io "sluice" not found (404 NotFound)',
      ),
    );
    await until(() => events.length === 6, "six events");
    assert.deepEqual(events, [
      "ADDED sluice",
      "MODIFIED sluice",
      "MODIFIED sluice",
      "MODIFIED sluice",
      "MODIFIED sluice",
      "DELETED sluice",
    ]);
    watch.stop();
    await watch.done;

    const paths = server.requests.filter((r) => r.path.includes("gatewayclasses")).map((r) => r.path);
    assert.ok(
      paths.every((path) => path.startsWith("/apis/gateway.networking.k8s.io/v1/gatewayclasses")),
      String(paths),
    );
  });
});

test("every Istio and Gateway API kind of the registry has its client, with the kind's scope", () => {
  const clients = [
    ...Object.values(istioClients(server.kubeConfig())),
    ...Object.values(gatewayApiClients(server.kubeConfig())),
  ];
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

test("kindClient: any registry kind at a version it serves, built-ins included", async () => {
  const kubeConfig = server.kubeConfig();
  const older = kindClient<VirtualService>(kubeConfig, "networking.istio.io/v1beta1", "VirtualService");
  assert.ok(older.namespaced);
  await older.create({ ...virtualService("old", "default"), apiVersion: "networking.istio.io/v1beta1" });
  assert.equal((await older.get("default", "old")).apiVersion, "networking.istio.io/v1beta1");
  await older.delete("default", "old");

  const services = kindClient(kubeConfig, "v1", "Service");
  assert.ok(services.namespaced);
  await services.create({ apiVersion: "v1", kind: "Service", metadata: { name: "reviews", namespace: "default" } });
  // Lists of built-in kinds leave apiVersion and kind off their items; the client puts them back.
  const listed = (await services.list("default")).items[0];
  assert.equal(listed.apiVersion, "v1");
  assert.equal(listed.kind, "Service");

  const namespaces = kindClient(kubeConfig, "v1", "Namespace");
  assert.equal(namespaces.namespaced, false);

  assert.throws(() => kindClient(kubeConfig, "networking.istio.io/v2", "VirtualService"), /no kind VirtualService/);
});
