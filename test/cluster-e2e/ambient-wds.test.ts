// WDS to a ztunnel-like client (issue 30): bin/sluiced.js with PILOT_ENABLE_AMBIENT=true against the
// test cluster, and a delta client subscribed to every Address as ztunnel is by default. A Pod added
// (once it has an IP), relabelled out of its Service and deleted each reaches the client as a delta
// response naming that Pod alone (not the whole mesh again), and a Service's VIP as its own address;
// /debug/ambientz shows the index.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import type { discovery } from "../../src/api/index.ts";
import { workloadapi } from "../../src/api/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { DeltaClient } from "../support/ads-client.ts";
import { type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();
const ADDRESS = "type.googleapis.com/istio.workload.Address";
const MERGE = { "content-type": "application/merge-patch+json" };

describe("WDS follows the cluster's Pods and Services", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let sluiced: Sluiced | undefined;
  let client: DeltaClient | undefined;
  const uid = () => `Kubernetes//Pod/${ns}/web-0`;
  const serviceName = () => `${ns}/web.${ns}.svc.cluster.local`;

  /** The next response that names (or removes) `name`, every response acked on the way. */
  async function nextNaming(name: string): Promise<discovery.DeltaDiscoveryResponse> {
    for (;;) {
      const res = await (client as DeltaClient).next();
      (client as DeltaClient).ack(res);
      if (res.resources.some((r) => r.name === name) || res.removedResources.includes(name)) return res;
    }
  }
  const workloadIn = (res: discovery.DeltaDiscoveryResponse) => {
    const resource = res.resources.find((r) => r.name === uid())?.resource;
    assert.ok(resource, `the response names ${uid()}`);
    const address = fromBinary(workloadapi.AddressSchema, resource.value);
    assert.equal(address.type.case, "workload");
    return address.type.value as workloadapi.Workload;
  };

  before(async () => {
    cluster = await sharedCluster();
    ns = await cluster.namespace("ambient-wds");
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
    });
    await cluster.must("POST", `/apis/security.istio.io/v1/namespaces/${ns}/authorizationpolicies`, {
      apiVersion: "security.istio.io/v1",
      kind: "AuthorizationPolicy",
      metadata: { name: "allow-same-namespace" },
      spec: { action: "ALLOW", rules: [{ from: [{ source: { namespaces: [ns] } }] }] },
    });
    sluiced = await startSluiced(cluster.kubeconfigPath, { env: { PILOT_ENABLE_AMBIENT: "true" } });
    client = DeltaClient.connect(sluiced.grpcAddress);
    client.request({
      typeUrl: ADDRESS,
      node: { id: "ztunnel~10.244.0.2~ztunnel-a.istio-system~istio-system.svc.cluster.local" },
    });
  });

  after(async () => {
    client?.client.close();
    await sluiced?.stop();
  });

  test("the first answer holds every address; the Service is one, by namespace/hostname with its VIP", async () => {
    const res = await nextNaming(serviceName());
    const service = res.resources.find((r) => r.name === serviceName())?.resource;
    assert.ok(service);
    const decoded = fromBinary(workloadapi.AddressSchema, service.value).type.value as workloadapi.Service;
    assert.equal(decoded.hostname, `web.${ns}.svc.cluster.local`);
    assert.equal(decoded.addresses.length, 1, "its cluster IP");
    assert.deepEqual(
      decoded.ports.map((p) => p.servicePort),
      [80],
    );
  });

  test("an on-demand client asking for the Service's VIP gets the Service, its VIP as an alias, nothing removed", async () => {
    const vip = (await cluster.must("GET", `/api/v1/namespaces/${ns}/services/web`)).body.spec.clusterIP as string;
    const onDemand = DeltaClient.connect((sluiced as Sluiced).grpcAddress);
    try {
      onDemand.request({
        typeUrl: ADDRESS,
        node: { id: "ztunnel~10.244.0.3~ztunnel-b.istio-system~istio-system.svc.cluster.local" },
        resourceNamesSubscribe: [`/${vip}`],
      });
      const res = await onDemand.next();
      assert.deepEqual(
        res.resources.map((r) => [r.name, r.aliases]),
        [[serviceName(), [`/${vip}`]]],
      );
      assert.deepEqual(res.removedResources, []);
    } finally {
      onDemand.client.close();
    }
  });

  test("a Pod is sent once it has an IP, behind the Service it is selected by, alone in its response", async () => {
    await cluster.must("POST", `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-0", labels: { app: "web" } },
      spec: {
        serviceAccountName: "default",
        nodeName: "node-a",
        containers: [{ name: "web", image: "web", ports: [{ name: "http", containerPort: 8080 }] }],
      },
    });
    // No kubelet: the test says the pod runs and is ready.
    await cluster.must(
      "PATCH",
      `/api/v1/namespaces/${ns}/pods/web-0/status`,
      {
        status: {
          phase: "Running",
          podIP: "10.244.77.5",
          podIPs: [{ ip: "10.244.77.5" }],
          conditions: [{ type: "Ready", status: "True" }],
        },
      },
      MERGE,
    );
    const res = await nextNaming(uid());
    assert.deepEqual(
      res.resources.map((r) => r.name),
      [uid()],
    );
    const workload = workloadIn(res);
    assert.deepEqual([...(workload.addresses[0] ?? [])], [10, 244, 77, 5]);
    assert.equal(workload.node, "node-a");
    assert.equal(workload.status, workloadapi.WorkloadStatus.HEALTHY);
    assert.deepEqual(
      workload.services[serviceName()]?.ports.map((p) => [p.servicePort, p.targetPort]),
      [[80, 8080]],
    );
    // /debug/ambientz lists it, its address as text, and the namespace's policy.
    const ambientz = (await (sluiced as Sluiced).debug("ambientz")) as {
      workloads: { uid: string; addresses: string[] }[];
      policies: { name: string; namespace: string }[];
    };
    assert.deepEqual(ambientz.workloads.find((w) => w.uid === uid())?.addresses, ["10.244.77.5"]);
    assert.ok(ambientz.policies.some((p) => p.name === "allow-same-namespace" && p.namespace === ns));
  });

  test("relabelled out of the Service, the Pod is sent again without it", async () => {
    await cluster.must(
      "PATCH",
      `/api/v1/namespaces/${ns}/pods/web-0`,
      { metadata: { labels: { app: "other" } } },
      MERGE,
    );
    const res = await nextNaming(uid());
    assert.deepEqual(Object.keys(workloadIn(res).services), []);
  });

  test("deleted, the Pod is removed", async () => {
    await cluster.must("DELETE", `/api/v1/namespaces/${ns}/pods/web-0?gracePeriodSeconds=0`);
    const res = await nextNaming(uid());
    // Deleting first marks it terminating (unhealthy); the removal follows.
    const removed = res.removedResources.includes(uid()) ? res : await nextNaming(uid());
    assert.deepEqual(removed.removedResources, [uid()]);
  });
});
