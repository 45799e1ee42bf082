import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { mcp } from "../../api/index.ts";
import { toMcpResource } from "../../xds/index.ts";
import { fromMcpResource } from "./convert.ts";

const gvk = { group: "networking.istio.io", version: "v1", kind: "Gateway" };

test("an object survives the trip through an MCP resource, with the sender's version as resourceVersion", () => {
  const object = {
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name: "ingress", namespace: "edge", labels: { a: "b" }, creationTimestamp: "2026-03-04T05:06:07Z" },
    spec: {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" } }],
    },
  };
  const resource = toMcpResource({
    key: { kind: "networking.istio.io/Gateway", namespace: "edge", name: "ingress" },
    object,
    source: "file",
    scope: "gw.yaml",
    resourceVersion: 7,
  });
  assert.deepEqual(fromMcpResource(gvk, resource), {
    ...object,
    metadata: { ...object.metadata, resourceVersion: "7" },
  });
});

test("cluster-scoped names, missing metadata and foreign bodies", () => {
  const ns = fromMcpResource(
    { group: "", version: "v1", kind: "Namespace" },
    create(mcp.ResourceSchema, { metadata: { name: "/shop" } }),
  );
  assert.deepEqual(ns, { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  assert.match(String(fromMcpResource(gvk, create(mcp.ResourceSchema, {}))), /without metadata/);
  assert.match(
    String(fromMcpResource(gvk, create(mcp.ResourceSchema, { metadata: { name: "edge/" } }))),
    /not namespace\/name/,
  );
  const proto = create(mcp.ResourceSchema, {
    metadata: { name: "edge/ingress" },
    body: create(AnySchema, { typeUrl: "type.googleapis.com/istio.networking.v1alpha3.Gateway" }),
  });
  assert.match(String(fromMcpResource(gvk, proto)), /not a Struct/);
});
