import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { route } from "../../api/index.ts";
import { messageFactory, newRoute, newRouteAction } from "./message.ts";

describe("messageFactory", () => {
  it("gives exactly the message create() gives, in the same key order", () => {
    for (const schema of [route.RouteSchema, route.RouteActionSchema, route.VirtualHostSchema]) {
      const made = messageFactory(schema)();
      assert.deepStrictEqual(made, create(schema));
      assert.deepEqual(Object.keys(made), Object.keys(create(schema)));
    }
  });

  it("gives every message its own lists, maps and oneofs", () => {
    const a = newRouteAction();
    const b = newRouteAction();
    a.hashPolicy.push(create(route.RouteAction_HashPolicySchema));
    a.clusterSpecifier = { case: "cluster", value: "c" };
    assert.equal(b.hashPolicy.length, 0);
    assert.equal(b.clusterSpecifier.case, undefined);
    const r = newRoute();
    r.typedPerFilterConfig.x = create(AnySchema);
    assert.deepEqual(newRoute().typedPerFilterConfig, {});
    assert.notEqual(newRouteAction().clusterSpecifier, newRouteAction().clusterSpecifier);
  });
});
