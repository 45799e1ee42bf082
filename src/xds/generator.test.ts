import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { core } from "../api/index.ts";
import { parseProxy } from "../model/proxy.ts";
import { XdsError } from "./errors.ts";
import { buildNamed, type Generator, GeneratorRegistry, loadGeneratorPlugins } from "./generator.ts";
import { TypeUrl } from "./types.ts";

const named = (name: string): Generator & { name: string } => ({ name, generate: () => ({ resources: [] }) });

function proxy(type: string, generator?: string) {
  const node = create(core.NodeSchema, {
    id: `${type}~10.0.0.1~p.ns~ns.svc.cluster.local`,
    metadata: generator ? { GENERATOR: generator } : {},
  });
  const { proxy } = parseProxy(node);
  assert.ok(proxy);
  return proxy;
}

function nameOf(g: Generator | undefined): string | undefined {
  return (g as { name?: string } | undefined)?.name;
}

test("lookup order: GENERATOR/typeURL, proxyType/typeURL, typeURL, GENERATOR, event for debug, api", () => {
  const r = new GeneratorRegistry();
  r.register("api", named("api"));
  r.register("event", named("event"));
  r.register("grpc", named("grpc"));
  r.register(TypeUrl.Cluster, named("cds"));
  r.register(`router/${TypeUrl.Cluster}`, named("router-cds"));
  r.register(`grpc/${TypeUrl.Cluster}`, named("grpc-cds"));

  assert.equal(nameOf(r.find(proxy("router", "grpc"), TypeUrl.Cluster)), "grpc-cds");
  assert.equal(nameOf(r.find(proxy("router"), TypeUrl.Cluster)), "router-cds");
  assert.equal(nameOf(r.find(proxy("sidecar"), TypeUrl.Cluster)), "cds");
  assert.equal(nameOf(r.find(proxy("sidecar", "grpc"), TypeUrl.Listener)), "grpc");
  assert.equal(nameOf(r.find(proxy("sidecar"), "istio.io/debug/syncz")), "event");
  assert.equal(nameOf(r.find(proxy("sidecar"), "networking.istio.io/v1/VirtualService")), "api");
  // The proxy's own GENERATOR outranks the debug/api fallbacks.
  assert.equal(nameOf(r.find(proxy("sidecar", "grpc"), "istio.io/debug/syncz")), "grpc");
});

test("a generator registered after a lookup is found by the next one", () => {
  const r = new GeneratorRegistry();
  r.register("api", named("api"));
  assert.equal(nameOf(r.find(proxy("router"), TypeUrl.Cluster)), "api");
  r.register(`router/${TypeUrl.Cluster}`, named("router-cds"));
  assert.equal(nameOf(r.find(proxy("router"), TypeUrl.Cluster)), "router-cds");
  assert.equal(nameOf(r.find(proxy("sidecar"), TypeUrl.Cluster)), "api");
});

test("no generator at all is undefined", () => {
  assert.equal(new GeneratorRegistry().find(proxy("sidecar"), TypeUrl.Cluster), undefined);
});

test("a plugin module registers generators at start-up", async () => {
  const r = new GeneratorRegistry();
  await loadGeneratorPlugins(["test/support/custom-type-plugin.ts"], r);
  assert.deepEqual(r.keys(), ["type.googleapis.com/example.plugin.v1.Greeting"]);
});

test("a plugin path that does not load, or exports no register function, is an error naming the path", async () => {
  await assert.rejects(
    loadGeneratorPlugins(["test/support/missing.js"], new GeneratorRegistry()),
    /generator plugin test\/support\/missing.js: cannot load/,
  );
  await assert.rejects(
    loadGeneratorPlugins(["src/xds/types.ts"], new GeneratorRegistry()),
    /exports no register\(registry\) function/,
  );
});

test("buildNamed: a name whose build throws is left out and named; the others are built", () => {
  const built = buildNamed(["a", "broken", "none", "b"], (name) => {
    if (name === "broken") throw new Error("invalid uint32: 4294967296");
    return name === "none" ? undefined : create(core.NodeSchema, { id: name });
  });
  assert.deepEqual(
    built.resources.map((r) => r.name),
    ["a", "b"],
  );
  assert.deepEqual(built.errors, [{ name: "broken", error: "invalid uint32: 4294967296" }]);
  const refusal = new XdsError(status.PERMISSION_DENIED, "not yours");
  assert.throws(
    () =>
      buildNamed(["a"], () => {
        throw refusal;
      }),
    refusal,
  );
});
