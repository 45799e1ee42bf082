import assert from "node:assert/strict";
import { test } from "node:test";
import { SLUICE_VERSION } from "../../util/version.ts";
import { controlPlaneIdentifier } from "./control-plane.ts";

test("the identifier is istiod's JSON: component, the pod name as ID, the build info", () => {
  assert.deepEqual(JSON.parse(controlPlaneIdentifier({ POD_NAME: "istiod-7d4f-x2" }, "node-1")), {
    Component: "istiod",
    ID: "istiod-7d4f-x2",
    Info: {
      version: SLUICE_VERSION,
      revision: "unknown",
      golang_version: process.version,
      status: "unknown",
      tag: SLUICE_VERSION,
    },
  });
});

test("without POD_NAME the ID is the host name", () => {
  assert.equal(JSON.parse(controlPlaneIdentifier({}, "node-1")).ID, "node-1");
  assert.equal(JSON.parse(controlPlaneIdentifier({ POD_NAME: "" }, "node-1")).ID, "node-1");
});
