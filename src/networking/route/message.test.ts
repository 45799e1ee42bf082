import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { matcher, route } from "../../api/index.ts";
import {
  newClusterWeight,
  newDecorator,
  newHeaderMatcher,
  newRoute,
  newRouteAction,
  newRouteConfiguration,
  newRouteMatch,
  newStringMatcher,
  newVirtualHost,
  newWeightedCluster,
} from "./message.ts";

function assertShape<Desc extends DescMessage>(made: MessageShape<Desc>, schema: Desc): void {
  assert.deepStrictEqual(made, create(schema));
  assert.deepEqual(Object.keys(made), Object.keys(create(schema)));
}

describe("route messages written as plain objects", () => {
  it("have exactly the shape, zero values and key order create() gives", () => {
    assertShape(newRouteConfiguration(), route.RouteConfigurationSchema);
    assertShape(newVirtualHost(), route.VirtualHostSchema);
    assertShape(newRoute(), route.RouteSchema);
    assertShape(newRouteMatch(), route.RouteMatchSchema);
    assertShape(newRouteAction(), route.RouteActionSchema);
    assertShape(newDecorator(""), route.DecoratorSchema);
    assertShape(newWeightedCluster([]), route.WeightedClusterSchema);
    assertShape(newClusterWeight(), route.WeightedCluster_ClusterWeightSchema);
    assertShape(newHeaderMatcher("", { case: undefined }), route.HeaderMatcherSchema);
    assertShape(newStringMatcher({ case: undefined }), matcher.StringMatcherSchema);
  });

  it("each have their own lists and oneofs", () => {
    const a = newRouteAction();
    a.hashPolicy.push(create(route.RouteAction_HashPolicySchema));
    assert.equal(newRouteAction().hashPolicy.length, 0);
    assert.notEqual(newRouteAction().clusterSpecifier, newRouteAction().clusterSpecifier);
  });
});
