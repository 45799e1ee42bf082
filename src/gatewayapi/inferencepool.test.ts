import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConfigObject, gatewayapi } from "../config/index.ts";
import { inferencePoolStatus } from "./inferencepool.ts";
import { clusterObjects } from "./model.ts";

const pool: ConfigObject = {
  apiVersion: "inference.networking.k8s.io/v1",
  kind: "InferencePool",
  metadata: { name: "pool", namespace: "ai" },
  spec: { endpointPickerRef: { name: "epp" } },
};

function route(accepted: "True" | "False"): gatewayapi.HTTPRoute {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "r", namespace: "ai" },
    spec: { rules: [{ backendRefs: [{ group: "inference.networking.k8s.io", kind: "InferencePool", name: "pool" }] }] },
    status: {
      parents: [
        {
          parentRef: { name: "gw", namespace: "infra" },
          controllerName: "istio.io/gateway-controller",
          conditions: [{ type: "Accepted", status: accepted, message: "no listener" }],
        },
      ],
    },
  };
}

test("a pool no accepted route uses has an empty status", () => {
  assert.deepEqual(inferencePoolStatus(pool, [], clusterObjects([])), {});
});

test("each Gateway whose route uses the pool is a parent; Accepted follows the route's status", () => {
  const status = inferencePoolStatus(pool, [route("True")], clusterObjects([])) as {
    parents: { parentRef: unknown; conditions: { type: string; status: string; message: string }[] }[];
  };
  assert.deepEqual(status.parents[0].parentRef, {
    group: "gateway.networking.k8s.io",
    kind: "Gateway",
    namespace: "infra",
    name: "gw",
  });
  const [accepted, resolved] = status.parents[0].conditions;
  assert.equal(accepted.status, "True");
  assert.equal(resolved.message, "Referenced ExtensionRef not found epp");
});

test("a route the Gateway rejected makes the pool not accepted, with the route's reason", () => {
  const epp = { apiVersion: "v1", kind: "Service", metadata: { name: "epp", namespace: "ai" } };
  const status = inferencePoolStatus(pool, [route("False")], clusterObjects([epp])) as {
    parents: { conditions: { type: string; status: string; message: string }[] }[];
  };
  const [accepted, resolved] = status.parents[0].conditions;
  assert.equal(accepted.message, "Referenced HTTPRoute ai/r not accepted by Gateway infra/gw: no listener");
  assert.equal(resolved.status, "True");
});
