import assert from "node:assert/strict";
import { get, type IncomingMessage, request } from "node:http";
import { after, before, describe, test } from "node:test";
import { type ConfigObject, KINDS } from "../../src/config/index.ts";
import { KubeTestServer } from "./index.ts";

interface WatchEvent {
  type: string;
  object: ConfigObject & { code?: number; reason?: string };
}

/** Opens a watch and collects its events; `response` has the raw headers. */
function openWatch(url: string): Promise<{ response: IncomingMessage; events: WatchEvent[]; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      const events: WatchEvent[] = [];
      let buffered = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        buffered += chunk;
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          events.push(JSON.parse(buffered.slice(0, newline)) as WatchEvent);
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf("\n");
        }
      });
      const ended = new Promise<void>((done) => response.on("close", done));
      resolve({ response, events, ended });
    }).on("error", reject);
  });
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), "condition not reached");
}

function virtualService(name: string, labels: Record<string, string> = {}): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name, namespace: "default", labels },
    spec: { hosts: [name] },
  };
}

describe("KubeTestServer", () => {
  let server: KubeTestServer;
  before(async () => {
    server = await KubeTestServer.start({ historyLimit: 50 });
  });
  after(() => server.close());

  test("list carries the collection resourceVersion; built-in items have no apiVersion/kind", async () => {
    server.create({ apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "shop" }, spec: {} });
    const list = (await (await fetch(`${server.url}/api/v1/namespaces/shop/services`)).json()) as {
      kind: string;
      metadata: { resourceVersion: string };
      items: ConfigObject[];
    };
    assert.equal(list.kind, "ServiceList");
    assert.equal(list.metadata.resourceVersion, String(server.resourceVersion));
    assert.deepEqual(
      list.items.map((i) => [i.metadata.name, i.apiVersion, i.kind]),
      [["web", undefined, undefined]],
    );
    const other = (await (await fetch(`${server.url}/api/v1/namespaces/other/services`)).json()) as {
      items: unknown[];
    };
    assert.equal(other.items.length, 0);
  });

  test("watch from a resourceVersion replays later changes, chunked, then streams new ones", async () => {
    const first = server.create(virtualService("a"));
    server.create(virtualService("b"));
    const watch = await openWatch(
      `${server.url}/apis/networking.istio.io/v1beta1/virtualservices?watch=true&resourceVersion=${first.metadata.resourceVersion}`,
    );
    assert.equal(watch.response.statusCode, 200);
    assert.equal(watch.response.headers["transfer-encoding"], "chunked");
    await until(() => watch.events.length === 1);
    assert.equal(watch.events[0].type, "ADDED");
    assert.equal(watch.events[0].object.metadata.name, "b");
    // Served at the version the client asked for.
    assert.equal(watch.events[0].object.apiVersion, "networking.istio.io/v1beta1");

    const updated = server.update({ ...virtualService("b"), spec: { hosts: ["b", "b2"] } });
    server.delete(virtualService("a"));
    await until(() => watch.events.length === 3);
    assert.deepEqual(
      watch.events.slice(1).map((e) => [e.type, e.object.metadata.name]),
      [
        ["MODIFIED", "b"],
        ["DELETED", "a"],
      ],
    );
    assert.equal(watch.events[1].object.metadata.resourceVersion, updated.metadata.resourceVersion);
    assert.equal(Number(watch.events[2].object.metadata.resourceVersion), server.resourceVersion);
    server.disconnectWatches();
    await watch.ended;
  });

  test("a watch from a compacted resourceVersion gets one ERROR event: Status 410 Expired", async () => {
    const old = server.create(virtualService("c"));
    server.create(virtualService("d"));
    server.compactHistory();
    const watch = await openWatch(
      `${server.url}/apis/networking.istio.io/v1/virtualservices?watch=true&resourceVersion=${old.metadata.resourceVersion}`,
    );
    await watch.ended;
    assert.equal(watch.response.statusCode, 200);
    assert.equal(watch.events.length, 1);
    assert.equal(watch.events[0].type, "ERROR");
    assert.equal(watch.events[0].object.kind, "Status");
    assert.equal(watch.events[0].object.code, 410);
    assert.equal(watch.events[0].object.reason, "Expired");
  });

  test("a bounded history expires old resourceVersions on its own", async () => {
    const small = await KubeTestServer.start({ historyLimit: 2 });
    try {
      const first = small.create(virtualService("x1"));
      for (const name of ["x2", "x3", "x4"]) small.create(virtualService(name));
      const watch = await openWatch(
        `${small.url}/apis/networking.istio.io/v1/virtualservices?watch=true&resourceVersion=${first.metadata.resourceVersion}`,
      );
      await watch.ended;
      assert.equal(watch.events[0].object.code, 410);
    } finally {
      await small.close();
    }
  });

  test("bookmarks go only to watches that allow them and carry the current resourceVersion", async () => {
    const base = `${server.url}/apis/networking.istio.io/v1/namespaces/default/virtualservices?watch=true&resourceVersion=${server.resourceVersion}`;
    const withBookmarks = await openWatch(`${base}&allowWatchBookmarks=true`);
    const without = await openWatch(base);
    await until(() => server.openWatches() === 2);
    server.sendBookmarks();
    await until(() => withBookmarks.events.length === 1);
    assert.equal(withBookmarks.events[0].type, "BOOKMARK");
    assert.equal(withBookmarks.events[0].object.metadata.resourceVersion, String(server.resourceVersion));
    server.create(virtualService("e"));
    await until(() => without.events.length === 1);
    assert.equal(without.events[0].type, "ADDED");
    server.disconnectWatches();
  });

  test("a label-selected watch sees an object that stops matching as DELETED", async () => {
    const watch = await openWatch(
      `${server.url}/apis/networking.istio.io/v1/virtualservices?watch=true&resourceVersion=${server.resourceVersion}&labelSelector=tier%3Dfront`,
    );
    server.create(virtualService("f", { tier: "front" }));
    server.create(virtualService("g", { tier: "back" }));
    server.update(virtualService("f", { tier: "back" }));
    await until(() => watch.events.length === 2);
    assert.deepEqual(
      watch.events.map((e) => [e.type, e.object.metadata.name]),
      [
        ["ADDED", "f"],
        ["DELETED", "f"],
      ],
    );
    server.disconnectWatches();
  });

  test("status subresource: PUT and merge PATCH change only the status; stale resourceVersion is a conflict", async () => {
    const created = server.create(virtualService("h"));
    const path = `${server.url}/apis/networking.istio.io/v1/namespaces/default/virtualservices/h/status`;
    const put = await fetch(path, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...created, spec: { hosts: ["ignored"] }, status: { observedGeneration: 1 } }),
    });
    assert.equal(put.status, 200);
    const stored = server.get(virtualService("h"));
    assert.deepEqual(stored.status, { observedGeneration: 1 });
    assert.deepEqual(stored.spec, { hosts: ["h"] });
    assert.equal(stored.metadata.generation, 1);

    const stale = await fetch(path, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...created, status: {} }),
    });
    assert.equal(stale.status, 409);
    assert.equal(((await stale.json()) as { reason: string }).reason, "Conflict");

    const patch = await fetch(path, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json" },
      body: JSON.stringify({ status: { conditions: [{ type: "Reconciled" }] } }),
    });
    assert.equal(patch.status, 200);
    assert.deepEqual(server.get(virtualService("h")).status, {
      observedGeneration: 1,
      conditions: [{ type: "Reconciled" }],
    });
  });

  test("create, update and delete over HTTP; generation counts spec changes", async () => {
    const collection = `${server.url}/apis/networking.istio.io/v1/namespaces/web/virtualservices`;
    const created = await fetch(collection, {
      method: "POST",
      body: JSON.stringify({ ...virtualService("i"), metadata: { name: "i" } }),
    });
    assert.equal(created.status, 201);
    const body = (await created.json()) as ConfigObject;
    assert.equal(body.metadata.namespace, "web");
    const again = await fetch(collection, { method: "POST", body: JSON.stringify(virtualService("i")) });
    assert.equal(again.status, 409);

    const updated = await fetch(`${collection}/i`, {
      method: "PUT",
      body: JSON.stringify({ ...body, spec: { hosts: ["i2"] } }),
    });
    assert.equal(((await updated.json()) as ConfigObject).metadata.generation, 2);
    assert.equal((await fetch(`${collection}/i`, { method: "DELETE" })).status, 200);
    assert.equal((await fetch(`${collection}/i`)).status, 404);
  });

  test("kinds not installed answer 404 until installed; discovery lists what is served", async () => {
    const only = await KubeTestServer.start({ kinds: [] });
    try {
      const path = `${only.url}/apis/gateway.networking.k8s.io/v1/httproutes`;
      const missing = await fetch(path);
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { kind: string }).kind, "Status");
      only.installKind(KINDS.find((k) => k.kind === "HTTPRoute")!);
      assert.equal((await fetch(path)).status, 200);
      const groups = (await (await fetch(`${only.url}/apis`)).json()) as { groups: { name: string }[] };
      assert.deepEqual(
        groups.groups.map((g) => g.name),
        ["gateway.networking.k8s.io"],
      );
      const resources = (await (await fetch(`${only.url}/apis/gateway.networking.k8s.io/v1`)).json()) as {
        resources: { name: string }[];
      };
      assert.deepEqual(
        resources.resources.map((r) => r.name),
        ["httproutes", "httproutes/status"],
      );
    } finally {
      await only.close();
    }
  });

  test("TokenRequests issue tokens that TokenReviews recognise for their audiences only", async () => {
    server.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "reader", namespace: "web" } });
    const request = (audiences: string[]) =>
      fetch(`${server.url}/api/v1/namespaces/web/serviceaccounts/reader/token`, {
        method: "POST",
        body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences } }),
      });
    const issued = await request(["istio-ca"]);
    assert.equal(issued.status, 201);
    const token = ((await issued.json()) as { status: { token: string } }).status.token;
    assert.equal(server.issuedTokens.at(-1)?.token, token);
    const noAccount = await fetch(`${server.url}/api/v1/namespaces/web/serviceaccounts/nobody/token`, {
      method: "POST",
      body: "{}",
    });
    assert.equal(noAccount.status, 404);

    const review = async (reviewed: string, audiences: string[]) => {
      const res = await fetch(`${server.url}/apis/authentication.k8s.io/v1/tokenreviews`, {
        method: "POST",
        body: JSON.stringify({
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenReview",
          spec: { token: reviewed, audiences },
        }),
      });
      assert.equal(res.status, 201);
      return ((await res.json()) as { status: { authenticated: boolean; user?: { username: string } } }).status;
    };
    assert.equal((await review(token, ["istio-ca"])).user?.username, "system:serviceaccount:web:reader");
    assert.equal((await review(token, ["https://kubernetes.default.svc"])).authenticated, false);
    assert.equal((await review("forged", ["istio-ca"])).authenticated, false);
    assert.deepEqual(server.reviewedTokens.slice(-3), [token, token, "forged"]);
  });

  test("a portforward to a missing pod, or of no single port, is refused before the upgrade", async () => {
    server.create({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "web" }, spec: {} });
    const upgrade = (path: string) =>
      new Promise<number | undefined>((resolve, reject) => {
        const req = request(`${server.url}${path}`, {
          headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13" },
        });
        req.on("response", (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on("error", reject);
        req.end();
      });
    assert.equal(await upgrade("/api/v1/namespaces/web/pods/gone/portforward?ports=80"), 404);
    assert.equal(await upgrade("/api/v1/namespaces/web/pods/p/portforward"), 400);
    assert.equal(await upgrade("/api/v1/namespaces/web/pods/p/portforward?ports=80&ports=81"), 400);
    // Without the channel protocol the WebSocket itself is refused.
    assert.equal(await upgrade("/api/v1/namespaces/web/pods/p/portforward?ports=80"), 400);
  });
});
