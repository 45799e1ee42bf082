// The checks istioctl validate adds for Kubernetes workloads (the webhook has none): a Service port
// must say its protocol (by name prefix or appProtocol) or Istio can only guess it, and a Deployment
// without the canonical service labels gets unlabeled telemetry. Objects in the Istio system
// namespace are exempt, as in istioctl.
// Istio's protocol names; src/config/index.ts does not export them (yet).
import { type ConfigObject, type Findings, kindKey, parseApiVersion, parseProtocol } from "../config/index.ts";
import { asObject, goQuote } from "../config/validation/common/index.ts";
import { ISTIO_SYSTEM_NAMESPACE } from "./validate-namespaces.ts";

// istioctl's links (pkg/url), at the latest docs as every link Sluice prints.
const DEPLOYMENT_REQUIREMENTS_URL = "https://istio.io/latest/docs/ops/deployment/requirements/";
const PROTOCOL_SELECTION_URL = "https://istio.io/latest/docs/ops/configuration/traffic-management/protocol-selection/";

// Istio's canonical service name and revision come from the first of these labels present (even empty).
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

// The messages are istioctl validate's, word for word: they name the object as `"<name>/<namespace>/:"`
// (Services) and print the Deployment's template labels as Go's %q prints a map.
function checkServicePorts(service: ConfigObject, out: Findings): void {
  const ports = asObject(service.spec)?.ports;
  if (!Array.isArray(ports)) return;
  const ref = goQuote(`${service.metadata.name ?? ""}/${service.metadata.namespace ?? ""}/:`);
  ports.forEach((port: unknown, i) => {
    if (typeof port !== "object" || port === null) return;
    const { name, protocol, appProtocol } = port as { name?: unknown; protocol?: unknown; appProtocol?: unknown };
    if (typeof protocol === "string" && protocol.toUpperCase() === "UDP") return;
    const at = out.at("spec.ports", i);
    if (appProtocol !== undefined && appProtocol !== null) {
      if (!parseProtocol(String(appProtocol))) {
        at.error(
          `service ${ref} doesn't follow Istio protocol selection. This is not recommended, See ${PROTOCOL_SELECTION_URL}`,
        );
      }
    } else if (name === undefined || name === null) {
      at.error(`service ${ref} has an unnamed port. This is not recommended, See ${DEPLOYMENT_REQUIREMENTS_URL}`);
    } else if (!parseProtocol(String(name).split("-")[0])) {
      at.error(
        `service ${ref} port ${goQuote(String(name))} does not follow the Istio naming convention. See ${DEPLOYMENT_REQUIREMENTS_URL}`,
      );
    }
  });
}

function checkDeploymentLabels(deployment: ConfigObject, out: Findings): void {
  const labels = asObject(asObject(asObject(deployment.spec)?.template)?.metadata)?.labels;
  const present = typeof labels === "object" && labels !== null ? (labels as Record<string, unknown>) : {};
  const has = (choices: readonly string[]) => choices.some((l) => Object.hasOwn(present, l));
  if (has(NAME_LABELS) && has(REVISION_LABELS)) return;
  const map = Object.keys(present)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(String(present[k]))}`)
    .join(" ");
  out
    .at("spec.template.metadata.labels")
    .warn(`may not provide Istio metrics and telemetry labels: map[${map}]. See ${DEPLOYMENT_REQUIREMENTS_URL}`);
}
