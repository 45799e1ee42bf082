// SotW pushes skip a response identical to what the proxy holds, also after an incremental EDS push
// (which sends only the changed assignments): the proxy then holds the earlier full response updated
// by the incremental one, and a full push of that same state sends nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "@bufbuild/protobuf";
import { type Generator, TypeUrl } from "../../src/xds/index.ts";
import { names, SotwClient, sidecarNode } from "../support/ads-client.ts";
import {
  assertNoResponse,
  edsCluster,
  loadAssignment,
  resourceName,
  startServer,
  testGenerators,
} from "../support/xds-fixtures.ts";

/** The assignments an endpoint (not full) push names, as the pipeline names changed services. */
let changed = new Set<string>();

/** EDS as the real generator answers: everything on a full push, only what changed on an incremental one. */
const incrementalEds: Generator = {
  generate(_proxy, watched, req) {
    const all = (req.push.snapshot as Record<string, Message[]>)[TypeUrl.Endpoint] ?? [];
    const wanted = all.filter(
      (m) => watched.resourceNames.has(resourceName(m)) && (req.full || changed.has(resourceName(m))),
    );
    if (!req.full && wanted.length === 0) return undefined;
    return {
      resources: wanted.map((m) => ({ name: resourceName(m), resource: m })),
      logDetails: { incremental: !req.full },
    };
  },
};

test("a full push after an incremental EDS push sends nothing when no assignment changed, and only then", async () => {
  const generators = testGenerators();
  generators.register(TypeUrl.Endpoint, incrementalEds);
  const a1 = loadAssignment("a", [["10.0.0.1", 80]]);
  const a2 = loadAssignment("a", [["10.0.0.2", 80]]);
  const b1 = loadAssignment("b", [["10.0.1.1", 80]]);
  const b2 = loadAssignment("b", [["10.0.1.2", 80]]);
  const clusters = [edsCluster("a"), edsCluster("b")];
  const h = await startServer({ [TypeUrl.Cluster]: clusters, [TypeUrl.Endpoint]: [a1, b1] }, { generators });
  const c = SotwClient.connect(h.address);
  try {
    c.request({ node: sidecarNode("incremental"), typeUrl: TypeUrl.Endpoint, resourceNames: ["a", "b"] });
    c.ack(await c.next(), ["a", "b"]);

    changed = new Set(["a"]);
    await h.push({ [TypeUrl.Cluster]: clusters, [TypeUrl.Endpoint]: [a2, b1] }, false);
    const incremental = await c.next();
    assert.deepEqual(names(incremental), ["a"]);
    c.ack(incremental, ["a", "b"]);

    // A full push (say, a route change) of the state the proxy holds: nothing to send.
    await h.push({ [TypeUrl.Cluster]: clusters, [TypeUrl.Endpoint]: [a2, b1] });
    await assertNoResponse(c);

    // Going back to a1 is a change from what the proxy holds, though it equals the last full response.
    await h.push({ [TypeUrl.Cluster]: clusters, [TypeUrl.Endpoint]: [a1, b1] });
    const reverted = await c.next();
    assert.deepEqual(names(reverted), ["a", "b"]);
    c.ack(reverted, ["a", "b"]);

    // An incremental push that leaves the named assignment as it was sends nothing either.
    changed = new Set(["b"]);
    await h.push({ [TypeUrl.Cluster]: clusters, [TypeUrl.Endpoint]: [a1, b1] }, false);
    await assertNoResponse(c);
    await h.push({ [TypeUrl.Cluster]: clusters, [TypeUrl.Endpoint]: [a1, b2] }, false);
    assert.deepEqual(names(await c.next()), ["b"]);
  } finally {
    c.close();
    await h.close();
  }
});
