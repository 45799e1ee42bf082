// sluiced in a real cluster does the single-writer work istiod's leaders do (issue 29): bin/sluiced.js
// with --kubeconfig and its CA on, discoverySelectors limited to this test's namespaces (the cluster
// is shared), as pod sluiced-e2e-0 of a made-up system namespace. It takes the Lease
// istio-namespace-controller-election there and writes istio-ca-root-cert with the root of its CA (the
// one it keeps in istio-ca-secret) into each selected namespace; it takes istio-gateway-status-leader-default
// and writes a Gateway's status; it serves an Ingress as Istio config and, holding istio-leader,
// writes its status; with ambient on, it takes istio-status-leader and writes a Service's waypoint
// condition; and it releases its Leases when it stops.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();
/** The Leases it releases when it stops (those it is checked to hold). */
const LEASES = ["istio-namespace-controller-election", "istio-gateway-status-leader-default", "istio-status-leader"];

describe("sluiced as the leader of a cluster's controllers", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let app: string;
  let dir: string;
  let sluiced: Sluiced | undefined;
  const holder = async (lease = "istio-namespace-controller-election") => {
    const res = await cluster.request("GET", `/apis/coordination.k8s.io/v1/namespaces/${system}/leases/${lease}`);
    return res.status === 200 ? (res.body.spec?.holderIdentity as string | undefined) : undefined;
  };

  before(async () => {
    cluster = await sharedCluster();
    const label = `root-cert-e2e-${Date.now().toString(36)}`;
    system = await cluster.namespace("sluice-system", { "sluice.test/mesh": label });
    app = await cluster.namespace("root-cert-app", { "sluice.test/mesh": label });
    dir = mkdtempSync(join(tmpdir(), "sluice-root-cert-"));
    const meshConfig = join(dir, "mesh.yaml");
    writeFileSync(meshConfig, `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label}\n`);
    await cluster.must("POST", `/apis/gateway.networking.k8s.io/v1/namespaces/${app}/gateways`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "web" },
      spec: { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    });
    // An Ingress of class istio, and the ingress gateway's Service (its addresses become the Ingress's status).
    await cluster.must("POST", `/apis/networking.k8s.io/v1/namespaces/${app}/ingresses`, {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "shop", annotations: { "kubernetes.io/ingress.class": "istio" } },
      spec: {
        rules: [
          {
            host: "shop.example.com",
            http: {
              paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
            },
          },
        ],
      },
    });
    await cluster.must("POST", `/api/v1/namespaces/${system}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "istio-ingressgateway" },
      spec: { ports: [{ name: "http2", port: 80 }], externalIPs: ["203.0.113.10"] },
    });
    // A Service naming a waypoint that is not there.
    await cluster.must("POST", `/api/v1/namespaces/${app}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "ambient", labels: { "istio.io/use-waypoint": "missing" } },
      spec: { ports: [{ name: "http", port: 80 }], selector: { app: "ambient" } },
    });
    sluiced = await startSluiced(cluster.kubeconfigPath, {
      secureGrpcAddr: "127.0.0.1:0",
      meshConfig,
      env: {
        POD_NAME: "sluiced-e2e-0",
        POD_NAMESPACE: system,
        K8S_INGRESS_NS: system,
        PILOT_ENABLE_AMBIENT: "true",
      },
    });
  });
  after(async () => {
    await sluiced?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("holds the namespace controller's Lease and writes its root into every selected namespace", async () => {
    await eventually("the Lease held by sluiced-e2e-0", async () => {
      const seen = await holder();
      return { ok: seen === "sluiced-e2e-0", seen: String(seen) };
    });
    const secret = await cluster.must("GET", `/api/v1/namespaces/${system}/secrets/istio-ca-secret`);
    const root = Buffer.from(secret.body.data["ca-cert.pem"], "base64").toString();
    assert.match(root, /BEGIN CERTIFICATE/);
    for (const ns of [app, system]) {
      await eventually(`istio-ca-root-cert in ${ns}`, async () => {
        const res = await cluster.request("GET", `/api/v1/namespaces/${ns}/configmaps/istio-ca-root-cert`);
        const pem = res.body?.data?.["root-cert.pem"];
        return { ok: pem === root, seen: `${res.status} ${String(pem).slice(0, 40)}` };
      });
    }
  });

  test("holds the gateway status Lease and writes a Gateway's status", async () => {
    await eventually("istio-gateway-status-leader-default held by sluiced-e2e-0", async () => {
      const seen = await holder("istio-gateway-status-leader-default");
      return { ok: seen === "sluiced-e2e-0", seen: String(seen) };
    });
    await eventually("the Gateway's Accepted condition", async () => {
      const res = await cluster.must("GET", `/apis/gateway.networking.k8s.io/v1/namespaces/${app}/gateways/web`);
      const conditions = (res.body.status?.conditions ?? []) as { type: string; status: string }[];
      const accepted = conditions.find((c) => c.type === "Accepted");
      return { ok: accepted?.status === "True", seen: conditions };
    });
  });

  test("serves an Ingress as Istio config and, holding istio-leader, writes its status", async () => {
    await eventually("the Ingress's VirtualService", async () => {
      const configs = (await sluiced?.debug("configz")) as { kind: string; metadata: { name: string } }[];
      const names = configs.filter((c) => c.kind === "VirtualService").map((c) => c.metadata.name);
      return { ok: names.includes("shop-example-com-shop-istio-autogenerated-k8s-ingress"), seen: names };
    });
    await eventually("the Ingress's load balancer status", async () => {
      const res = await cluster.must("GET", `/apis/networking.k8s.io/v1/namespaces/${app}/ingresses/shop`);
      const seen = res.body.status?.loadBalancer?.ingress;
      return { ok: JSON.stringify(seen) === JSON.stringify([{ ip: "203.0.113.10" }]), seen };
    });
    assert.equal(await holder("istio-leader"), "sluiced-e2e-0");
  });

  test("holds istio-status-leader and writes ambient's conditions", async () => {
    await eventually("the Service's WaypointBound condition", async () => {
      const res = await cluster.must("GET", `/api/v1/namespaces/${app}/services/ambient`);
      const conditions = (res.body.status?.conditions ?? []) as { type: string; reason: string }[];
      const bound = conditions.find((c) => c.type === "istio.io/WaypointBound");
      return { ok: bound?.reason === "WaypointIsNotReady", seen: conditions };
    });
    assert.equal(await holder("istio-status-leader"), "sluiced-e2e-0");
  });

  test("releases the Leases when it stops", async () => {
    await eventually("the Leases held by sluiced-e2e-0", async () => {
      const seen = await Promise.all(LEASES.map(holder));
      return { ok: seen.every((h) => h === "sluiced-e2e-0"), seen };
    });
    await sluiced?.stop();
    sluiced = undefined;
    assert.deepEqual(await Promise.all(LEASES.map(holder)), ["", "", ""]);
  });
});
