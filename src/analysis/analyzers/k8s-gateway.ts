// Gateway API analyzers. k8sgateway.SelectorAnalyzer: a policy selector that matches the pods of a Gateway
// API gateway has no effect there (targetRef is needed). k8sgateway.CRDVersionAnalyzer: installed
// Gateway API CRDs must be at least the bundle version Istio requires.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { selectorMatches } from "../labels.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { annotationsOf, asRecord, asStringMap, labelsOf, specOf } from "../resource.ts";

const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";
const BUNDLE_VERSION_ANNOTATION = "gateway.networking.k8s.io/bundle-version";
const POLICY_KINDS = [K.AuthorizationPolicy, K.RequestAuthentication, K.Telemetry, K.WasmPlugin];

export const k8sGatewaySelectorAnalyzer: Analyzer = {
  name: "k8sgateway.SelectorAnalyzer",
  description: "Check that selectors are effective for Kubernetes gateway",
  inputs: [...POLICY_KINDS, K.Pod],
  analyze(ctx) {
    const gatewayPods = ctx.list(K.Pod).filter((pod) => GATEWAY_NAME_LABEL in labelsOf(pod));
    for (const kind of POLICY_KINDS) {
      for (const policy of ctx.list(kind)) {
        const spec = specOf(policy);
        if (spec.targetRef !== undefined && spec.targetRef !== null) continue;
        if (spec.selector === undefined || spec.selector === null) continue;
        const selector = asStringMap(asRecord(spec.selector).matchLabels);
        for (const pod of gatewayPods) {
          if (pod.namespace !== policy.namespace || !selectorMatches(selector, labelsOf(pod))) continue;
          ctx.report(newMessage(MESSAGES.IneffectiveSelector, policy, labelsOf(pod)[GATEWAY_NAME_LABEL]));
        }
      }
    }
  },
};

/** pkg/config/schema/gatewayapi MinimumCRDVersions. */
const MINIMUM_CRD_VERSIONS: Readonly<Record<string, [number, number, number]>> = {
  "grpcroutes.gateway.networking.k8s.io": [1, 1, 0],
  "backendtlspolicies.gateway.networking.k8s.io": [1, 4, 0],
  "tlsroutes.gateway.networking.k8s.io": [1, 5, 0],
  "tcproutes.gateway.networking.k8s.io": [1, 6, 0],
};

// Masterminds semver's loose form: an optional "v", one to three numbers, prerelease and metadata.
const SEMVER = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/;

export const crdVersionAnalyzer: Analyzer = {
  name: "k8sgateway.CRDVersionAnalyzer",
  description: "Checks Gateway API CRDs are at the minimum version required by this Istio version",
  inputs: [K.CustomResourceDefinition],
  analyze(ctx) {
    for (const crd of ctx.list(K.CustomResourceDefinition)) {
      const minimum = MINIMUM_CRD_VERSIONS[crd.name];
      const bundleVersion = annotationsOf(crd)[BUNDLE_VERSION_ANNOTATION];
      const parsed = minimum && bundleVersion !== undefined ? SEMVER.exec(bundleVersion) : null;
      if (!minimum || !parsed) continue;
      const installed = [1, 2, 3].map((i) => Number(parsed[i] ?? 0));
      const below = installed[0] - minimum[0] || installed[1] - minimum[1] || installed[2] - minimum[2];
      if (below >= 0) continue;
      const text = `${installed.join(".")}${parsed[4] ? `-${parsed[4]}` : ""}${parsed[5] ? `+${parsed[5]}` : ""}`;
      ctx.report(newMessage(MESSAGES.GatewayAPICRDVersionBelowMinimum, crd, crd.name, text, minimum.join(".")));
    }
  },
};
