import assert from "node:assert/strict";
import { test } from "node:test";
import { namesControlPlaneCluster } from "./remote-namespace-controller.ts";

test("the controlPlaneClusters annotation names this cluster, or every cluster with *", () => {
  assert.equal(namesControlPlaneCluster("east", "east"), true);
  assert.equal(namesControlPlaneCluster("west,east", "east"), true);
  assert.equal(namesControlPlaneCluster("*", "east"), true);
  assert.equal(namesControlPlaneCluster("west", "east"), false);
  // Entries are taken as written, as istiod splits them: no trimming.
  assert.equal(namesControlPlaneCluster("west, east", "east"), false);
  assert.equal(namesControlPlaneCluster("", "east"), false);
  assert.equal(namesControlPlaneCluster(undefined, "east"), false);
});
