import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewayTemplateInput } from "../../../test/support/gateway-template-input.ts";
import type { GatewayTemplateInput } from "./kube-gateway.ts";
import { injectionSettingsFromValues } from "./settings.ts";
import { waypointObjects } from "./waypoint.ts";

/** A waypoint `wp` in `apps`, with the Helm values given. */
function waypoint(values: unknown = {}, overrides: Partial<GatewayTemplateInput> = {}): GatewayTemplateInput {
  return gatewayTemplateInput({
    gateway: { metadata: { name: "wp", namespace: "apps", uid: "u-2" } },
    gatewayClass: "istio-waypoint",
    controllerLabel: "istio.io-mesh-controller",
    deploymentName: "wp",
    serviceAccount: "wp",
    ports: [{ name: "mesh", port: 15008, protocol: "TCP", appProtocol: "hbone" }],
    serviceType: "ClusterIP",
    clusterId: "cluster-a",
    settings: injectionSettingsFromValues(values),
    ...overrides,
  });
}

type Made = Record<string, unknown> & { kind: string; metadata: { annotations: Record<string, string> } };
type PodSpec = {
  nodeSelector?: unknown;
  tolerations?: unknown;
  affinity?: unknown;
  containers: {
    args: string[];
    env: { name: string; value?: string }[];
    resources?: unknown;
    securityContext: object;
  }[];
};

function made(input: GatewayTemplateInput) {
  const objects = waypointObjects(input) as Made[];
  const byKind = (kind: string) => objects.find((o) => o.kind === kind) as Made;
  const pod = (byKind("Deployment").spec as { template: { spec: PodSpec } }).template.spec;
  const env = Object.fromEntries(pod.containers[0].env.map((e) => [e.name, e.value]));
  return { kinds: objects.map((o) => o.kind), service: byKind("Service"), pod, proxy: pod.containers[0], env };
}

test("a waypoint with Istio's default values", () => {
  const { kinds, service, pod, proxy, env } = made(waypoint());
  assert.deepEqual(kinds, ["ServiceAccount", "Deployment", "Service"]);
  assert.deepEqual(service.metadata.annotations, { "networking.istio.io/traffic-distribution": "PreferClose" });
  assert.deepEqual(proxy.args.slice(0, 6), [
    "proxy",
    "waypoint",
    "--domain",
    "$(POD_NAMESPACE).svc.cluster.local",
    "--serviceCluster",
    "wp.$(POD_NAMESPACE)",
  ]);
  assert.deepEqual(proxy.resources, {
    requests: { cpu: "100m", memory: "128Mi" },
    limits: { cpu: "2", memory: "1Gi" },
  });
  // The values' cluster name or "Kubernetes", never the control plane's CLUSTER_ID.
  assert.equal(env.ISTIO_META_CLUSTER_ID, "Kubernetes");
  assert.equal(env.ISTIO_META_NETWORK, undefined);
  assert.equal(pod.nodeSelector, undefined);
  assert.deepEqual(proxy.securityContext, {
    privileged: false,
    runAsGroup: 1337,
    runAsUser: 1337,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
  });
});

test("the values' waypoint scheduling, resources, platform and outlier log", () => {
  const values = {
    global: {
      platform: "openshift",
      proxy: { outlierLogPath: "/dev/stdout" },
      waypoint: {
        resources: { requests: { cpu: "50m", memory: null } },
        nodeSelector: { pool: "mesh" },
        tolerations: [{ key: "mesh", operator: "Exists" }],
        affinity: {},
      },
    },
    gateways: { seccompProfile: { type: "RuntimeDefault" } },
  };
  const { pod, proxy } = made(waypoint(values));
  assert.deepEqual(pod.nodeSelector, { pool: "mesh" });
  assert.deepEqual(pod.tolerations, [{ key: "mesh", operator: "Exists" }]);
  assert.equal(pod.affinity, undefined);
  assert.deepEqual(proxy.resources, { requests: { cpu: "50m" } });
  assert.equal(proxy.args.at(-1), "--outlierLogPath=/dev/stdout");
  const security = proxy.securityContext as Record<string, unknown>;
  assert.equal(security.runAsUser, undefined);
  assert.deepEqual(security.seccompProfile, { type: "RuntimeDefault" });
});

test("an east-west gateway asks for its network's view; a Gateway's annotation wins over the template's", () => {
  const { service, env } = made(
    waypoint(
      {},
      {
        controllerLabel: "istio.io-eastwest-controller",
        infrastructureLabels: { "topology.istio.io/network": "net-1" },
        infrastructureAnnotations: { "networking.istio.io/traffic-distribution": "Any" },
      },
    ),
  );
  assert.equal(env.ISTIO_META_NETWORK, "net-1");
  assert.equal(env.ISTIO_META_REQUESTED_NETWORK_VIEW, "net-1");
  assert.equal(service.metadata.annotations["networking.istio.io/traffic-distribution"], "Any");
  // A waypoint on that network does not.
  assert.equal(
    made(waypoint({}, { infrastructureLabels: { "topology.istio.io/network": "net-1" } })).env
      .ISTIO_META_REQUESTED_NETWORK_VIEW,
    undefined,
  );
});
