import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConfigObject } from "./model.ts";
import { validateObject } from "./validate.ts";

const virtualService = (weight: number): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name: "reviews", namespace: "default" },
  spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" }, weight }] }] },
});

describe("validateObject", () => {
  it("refuses a route weight its int32 cannot hold, at the weight", () => {
    assert.deepEqual(validateObject(virtualService(2147483647)).errors, []);
    for (const [weight, shown] of [
      [4294967296, "4294967296"],
      [1e20, "100000000000000000000"],
      [1e21, "1e+21"],
    ] as const) {
      assert.deepEqual(validateObject(virtualService(weight)).errors, [
        {
          path: "spec.http[0].route[0].weight",
          message: `json: cannot unmarshal number ${shown} into Go value of type int32`,
        },
      ]);
    }
  });
});
