// The proxy's endpoint view: written once per proxy, and again when what it reads is replaced.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeProxy } from "../../test/support/cluster-fixtures.ts";
import { MemoStore } from "../util/index.ts";
import { endpointView } from "./proxy-view.ts";

test("a proxy's endpoint view follows its cluster, network and locality, and is the same text for the same proxy", () => {
  const memos = new MemoStore();
  const view = (p: Parameters<typeof endpointView>[1]) => endpointView(memos, p);
  const proxy = makeProxy({ ipAddresses: ["10.0.0.7"] });
  const first = view(proxy);
  assert.equal(view(proxy), first);
  // Another proxy with the same fields has the same view.
  assert.equal(view(makeProxy({ ipAddresses: ["10.0.0.8"] })), first);
  proxy.metadata = { ...proxy.metadata, NETWORK: "net-2" };
  const onNet2 = view(proxy);
  assert.notEqual(onNet2, first);
  proxy.locality = { ...proxy.locality, zone: "zone-b" };
  assert.notEqual(view(proxy), onNet2);
  proxy.clusterId = "other-cluster";
  const elsewhere = view(proxy);
  assert.notEqual(elsewhere, onNet2);
  assert.equal(view(proxy), elsewhere);
});
