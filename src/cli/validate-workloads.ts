// The checks istioctl validate adds for Kubernetes workloads (the webhook has none): a Service port
// must say its protocol (by name prefix or appProtocol) or Istio can only guess it, and a Deployment
// without the canonical service labels gets unlabeled telemetry. Objects in the Istio system
// namespace are exempt, as in istioctl.
// Istio's protocol names; src/config/index.ts does not export them (yet).
import { type ConfigObject, type Findings, kindKey, parseApiVersion, parseProtocol } from "../config/index.ts";
import { ISTIO_SYSTEM_NAMESPACE } from "./validate.ts";

const APPLICATION_REQUIREMENTS_URL = "https://istio.io/latest/docs/ops/deployment/application-requirements/";
const PROTOCOL_SELECTION_URL = "https://istio.io/latest/docs/ops/configuration/traffic-management/protocol-selection/";

// Istio's canonical service name and revision come from the first of these labels present.
const NAME_LABELS = ["service.istio.io/canonical-name", "app.kubernetes.io/name", "app"];
const REVISION_LABELS = ["service.istio.io/canonical-revision", "app.kubernetes.io/version", "version"];

type WorkloadCheck = (obj: ConfigObject, out: Findings) => void;

const WORKLOAD_CHECKS: ReadonlyMap<string, WorkloadCheck> = new Map([
  [kindKey("", "Service"), checkServicePorts],
  [kindKey("apps", "Deployment"), checkDeploymentLabels],
]);

/** The istioctl-only check for this object's kind, if it has one. */
export function workloadCheck(obj: ConfigObject): WorkloadCheck | undefined {
  if (obj.metadata.namespace === ISTIO_SYSTEM_NAMESPACE) return undefined;
  return WORKLOAD_CHECKS.get(kindKey(parseApiVersion(obj.apiVersion).group, obj.kind));
}

function checkServicePorts(service: ConfigObject, out: Findings): void {
  const ports = (service.spec as { ports?: unknown } | undefined)?.ports;
  if (!Array.isArray(ports)) return;
  ports.forEach((port: unknown, i) => {
    if (typeof port !== "object" || port === null) return;
    const { name, protocol, appProtocol } = port as { name?: unknown; protocol?: unknown; appProtocol?: unknown };
    if (typeof protocol === "string" && protocol.toUpperCase() === "UDP") return;
    const at = out.at("spec.ports", i);
    if (appProtocol !== undefined && appProtocol !== null) {
      if (!parseProtocol(String(appProtocol))) {
        at.error(
          `appProtocol "${appProtocol}" does not follow Istio protocol selection; see ${PROTOCOL_SELECTION_URL}`,
        );
      }
    } else if (typeof name !== "string") {
      at.error(
        `unnamed port: Istio cannot tell its protocol; name it <protocol>[-<suffix>] or set appProtocol; see ${APPLICATION_REQUIREMENTS_URL}`,
      );
    } else if (!parseProtocol(name.split("-")[0])) {
      at.error(
        `port name "${name}" does not follow the Istio naming convention <protocol>[-<suffix>]; see ${APPLICATION_REQUIREMENTS_URL}`,
      );
    }
  });
}

function checkDeploymentLabels(deployment: ConfigObject, out: Findings): void {
  const spec = deployment.spec as { template?: { metadata?: { labels?: unknown } } } | undefined;
  const labels = spec?.template?.metadata?.labels;
  const present = typeof labels === "object" && labels !== null ? Object.keys(labels) : [];
  const missing = [NAME_LABELS, REVISION_LABELS].filter((choices) => !choices.some((l) => present.includes(l)));
  if (missing.length === 0) return;
  const wanted = missing.map((choices) => `"${choices.at(-1)}" (or ${choices.slice(0, -1).join(", ")})`).join(" and ");
  out
    .at("spec.template.metadata.labels")
    .warn(
      `may not provide Istio metrics and telemetry without the label ${wanted}; see ${APPLICATION_REQUIREMENTS_URL}`,
    );
}
