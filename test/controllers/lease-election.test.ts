// Leader election over a Lease against a real API server (test/cluster): one holder among three
// replicas, a released Lease handed over at once, and a crashed holder's Lease taken over only once
// it has gone unrenewed for its duration. Durations are shortened (istiod's are 30/15/7.5 s).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { defaultRevisionPreempts, LEASE_HOLDER_KEY, LeaseElection } from "../../src/controllers/index.ts";
import { KubeClient } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { writers } from "../support/managed-fields.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();

interface LeaseBody {
  metadata: { resourceVersion: string; annotations?: Record<string, string> };
  spec: { holderIdentity?: string; leaseTransitions?: number; leaseDurationSeconds?: number };
}

describe("LeaseElection", { skip }, () => {
  let cluster: Cluster;
  let namespace: string;
  let client: KubeClient;
  const elections: LeaseElection[] = [];
  const leasePath = (name: string) => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`;
  const lease = async (name: string) => (await cluster.must("GET", leasePath(name))).body as LeaseBody;

  /** Replicas competing for `name`; `runs` counts each one's turns as leader, `leading` whether it leads now. */
  function replicas(
    name: string,
    count: number,
    leaseDurationMs = 2000,
    prioritized?: { revision: string; defaultRevision: () => string },
  ) {
    const runs = new Map<string, number>();
    const leading = new Set<string>();
    const list = Array.from({ length: count }, (_, i) => {
      const identity = `${name}-${prioritized?.revision ?? "replica"}-${i}`;
      const priority = prioritized && {
        key: prioritized.revision,
        preempts: defaultRevisionPreempts(prioritized.revision, prioritized.defaultRevision),
      };
      const election = new LeaseElection({
        client,
        namespace,
        name,
        identity,
        ...priority,
        leaseDurationMs,
        renewDeadlineMs: leaseDurationMs / 2,
        retryPeriodMs: 200,
        run: (signal) => {
          runs.set(identity, (runs.get(identity) ?? 0) + 1);
          leading.add(identity);
          signal.addEventListener("abort", () => leading.delete(identity));
        },
      });
      elections.push(election);
      return { identity, election };
    });
    return { list, runs, leading };
  }

  before(async () => {
    cluster = await sharedCluster();
    namespace = await cluster.namespace("lease-election");
    client = new KubeClient(cluster.kubeConfig());
  });
  after(async () => {
    await Promise.all(elections.map((e) => e.stop()));
  });

  test("of three replicas exactly one leads, and the Lease names it", async () => {
    const { list, runs, leading } = replicas("istio-namespace-controller-election", 3);
    for (const { election } of list) election.start();
    await waitFor(() => leading.size === 1, "a leader");
    // Several more rounds of renewal and competition: still the one leader, started once.
    const leader = [...leading][0];
    const { resourceVersion } = (await lease("istio-namespace-controller-election")).metadata;
    await waitFor(
      async () => (await lease("istio-namespace-controller-election")).metadata.resourceVersion !== resourceVersion,
      "a renewal",
    );
    assert.deepEqual([...leading], [leader]);
    assert.deepEqual([...runs.entries()], [[leader, 1]]);
    assert.deepEqual(
      list.filter(({ election }) => election.isLeader).map(({ identity }) => identity),
      [leader],
    );
    const spec = (await lease("istio-namespace-controller-election")).spec;
    assert.equal(spec.holderIdentity, leader);
    assert.equal(spec.leaseDurationSeconds, 2);
    // Created and renewed as istiod's are: updates under its user agent's command.
    assert.deepEqual(writers(await lease("istio-namespace-controller-election")), [["pilot-discovery", "Update", ""]]);
  });

  test("a leader that stops releases the Lease and another replica takes over", async () => {
    const { list, leading } = replicas("istio-leader", 2, 60_000);
    for (const { election } of list) election.start();
    await waitFor(() => leading.size === 1, "a leader");
    const first = list.find(({ election }) => election.isLeader);
    assert.ok(first);
    const before = (await lease("istio-leader")).spec.leaseTransitions ?? 0;
    await first.election.stop();
    assert.equal(first.election.isLeader, false);
    // With a 60 s lease, only the release lets the other take over within the wait.
    await waitFor(() => leading.size === 1 && !leading.has(first.identity), "the other replica leading");
    const spec = (await lease("istio-leader")).spec;
    assert.notEqual(spec.holderIdentity, first.identity);
    assert.ok((spec.leaseTransitions ?? 0) > before, `transitions ${spec.leaseTransitions} after ${before}`);
  });

  test("a crashed holder's Lease is taken over only after it went unrenewed for its duration", async () => {
    // MicroTime: RFC 3339 with microseconds.
    const now = `${new Date().toISOString().slice(0, 23)}000Z`;
    await cluster.must("POST", `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "istio-gateway-deployment" },
      spec: {
        holderIdentity: "crashed",
        leaseDurationSeconds: 3,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 4,
      },
    });
    const { list, leading } = replicas("istio-gateway-deployment", 2, 3000);
    for (const { election } of list) election.start();
    // Two rounds of attempts each (200 ms apart) have seen the holder: nobody took it over.
    const seen = (await lease("istio-gateway-deployment")).metadata.resourceVersion;
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(leading.size, 0);
    assert.equal((await lease("istio-gateway-deployment")).metadata.resourceVersion, seen);
    await waitFor(() => leading.size === 1, "a replica leading once the lease expired");
    const spec = (await lease("istio-gateway-deployment")).spec;
    assert.ok(list.some(({ identity }) => identity === spec.holderIdentity));
    assert.equal(spec.leaseTransitions, 5);
  });

  test("prioritized: the default revision takes the Lease from another revision's holder at once", async () => {
    // The default tag names `default` (the tag watcher's defaultTagRevision); 60 s leases, so only
    // taking over moves the Lease within the wait.
    const defaultRevision = () => "default";
    const canary = replicas("istio-analyze-leader", 1, 60_000, { revision: "canary", defaultRevision });
    canary.list[0].election.start();
    await waitFor(() => canary.leading.size === 1, "the canary replica leading");
    assert.equal((await lease("istio-analyze-leader")).metadata.annotations?.[LEASE_HOLDER_KEY], "canary");
    // Another non-default revision waits for the holder, whatever its revision.
    const stable = replicas("istio-analyze-leader", 1, 60_000, { revision: "stable", defaultRevision });
    stable.list[0].election.start();
    const { resourceVersion } = (await lease("istio-analyze-leader")).metadata;
    await waitFor(
      async () => (await lease("istio-analyze-leader")).metadata.resourceVersion !== resourceVersion,
      "a renewal by the canary holder",
    );
    assert.equal((await lease("istio-analyze-leader")).spec.holderIdentity, canary.list[0].identity);
    assert.equal(stable.leading.size, 0);
    // The default revision takes it; the canary replica stops leading at its next renewal.
    const main = replicas("istio-analyze-leader", 1, 60_000, { revision: "default", defaultRevision });
    main.list[0].election.start();
    await waitFor(() => main.leading.size === 1 && canary.leading.size === 0, "the default revision leading alone");
    const taken = await lease("istio-analyze-leader");
    assert.equal(taken.spec.holderIdentity, main.list[0].identity);
    assert.equal(taken.metadata.annotations?.[LEASE_HOLDER_KEY], "default");
    assert.equal(stable.leading.size, 0);
    // Released by every replica: no holder, and no holder key.
    for (const { list } of [main, canary, stable]) await list[0].election.stop();
    const released = await lease("istio-analyze-leader");
    assert.equal(released.spec.holderIdentity, "");
    assert.equal(released.metadata.annotations?.[LEASE_HOLDER_KEY], undefined);
  });
});
