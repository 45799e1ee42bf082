// `sluice x check-inject [<type>/]<name>[.<namespace>]` or `-l k=v,...` (istioctl's x check-inject):
// which of the cluster's Istio injection webhooks would inject the pod (or a pod with those labels in
// -n's namespace), and why, from the webhooks' namespace and object selectors. The table, its
// colours and its messages are istioctl's, so scripts reading one read the other.
import type { CommandModule } from "yargs";
import { type LabelSelector, type Labels, selectorMatches } from "../sources/kube/labels.ts";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";

interface CheckInjectArgs {
  resource?: string;
  labels?: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
}

type Selector = LabelSelector;

export interface MutatingWebhookConfiguration {
  metadata: { name: string; labels?: Record<string, string> };
  webhooks?: { name: string; namespaceSelector?: Selector; objectSelector?: Selector }[];
}

export interface WebhookVerdict {
  name: string;
  revision: string;
  injected: boolean;
  reason: string;
}

/** Istio's selector that matches nothing, set on a deactivated webhook. */
const NEVER_MATCH: Selector = {
  matchLabels: { "istio.io/deactivated": "never-match" },
  matchExpressions: [{ key: "istio.io/deactivated", operator: "In", values: ["never-match"] }],
};
const INJECTION_LABEL = "istio-injection";

export const checkInjectCommand: CommandModule<object, CheckInjectArgs> = {
  command: "check-inject [resource]",
  describe: "Check whether, and why, a pod is (or would be) injected by the cluster's injection webhooks",
  builder: (yargs) =>
    yargs
      .positional("resource", { type: "string", describe: "[<type>/]<name>[.<namespace>] of a pod or its owner" })
      .option("labels", {
        alias: "l",
        type: "string",
        requiresArg: true,
        describe: "Check a pod with these labels (k=v,...) in -n's namespace instead",
      })
      .check((argv) => {
        if (argv.resource === undefined && argv.labels === undefined) {
          throw new Error(
            "check-inject requires only [<resource-type>/]<resource-name>[.<namespace>], or specify labels flag",
          );
        }
        return true;
      })
      .example("$0 x check-inject details-v1-fcff6c49c-kqnfk.test", "A pod")
      .example("$0 x check-inject deployment/details-v1 -n test", "The first pod of a Deployment")
      .example("$0 x check-inject -n test -l app=helloworld,version=v1", "A pod yet to be made")
      .epilogue(
        [
          "Lists each MutatingWebhookConfiguration with an Istio webhook (*istio.io), its revision, whether it",
          "injects, and the labels that decide it; more than one injecting is reported as an error.",
          `Exit status: ${EXIT_OK} checked, ${EXIT_INVALID} the pod or namespace could not be read, ${EXIT_USAGE} usage error.`,
        ].join("\n"),
      ) as never,
  handler: async (argv) => {
    const [{ kubeconfigAvailable }, { clusterAccess, parsePodRef }] = await Promise.all([
      import("./kubeconfig.ts"),
      import("./kube-access.ts"),
    ]);
    if (!kubeconfigAvailable(argv.kubeconfig)) {
      process.stderr.write("Error: no kubeconfig to reach a cluster: name one with --kubeconfig\n");
      process.exitCode = EXIT_USAGE;
      return;
    }
    const kube = clusterAccess(argv);
    const get = async <T>(path: string) => (await kube.client.request("GET", path)) as T;
    try {
      let podLabels: Labels;
      let namespace: string;
      if (argv.resource !== undefined) {
        const ref = parsePodRef(argv.resource, kube.namespaceOrDefault(argv.namespace));
        namespace = ref.namespace;
        podLabels = await podLabelsOf(ref.name, namespace, get);
      } else {
        namespace = kube.namespaceOrDefault(argv.namespace);
        podLabels = labelPairs(argv.labels ?? "");
      }
      const ns = await get<{ metadata: { labels?: Labels } }>(`/api/v1/namespaces/${encodeURIComponent(namespace)}`);
      const configs = await get<{ items: MutatingWebhookConfiguration[] }>(
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
      );
      process.stdout.write(checkInjectTable(analyzeWebhooks(configs.items, podLabels, ns.metadata.labels ?? {})));
      process.exitCode = EXIT_OK;
    } catch (err) {
      process.stderr.write(`Error: ${(err as Error).message}\n`);
      process.exitCode = EXIT_INVALID;
    }
  },
};

/** The labels of the pod `name` names: a pod, or `<kind>/<name>` of a workload or Service whose first pod is checked. */
async function podLabelsOf(name: string, namespace: string, get: <T>(path: string) => Promise<T>): Promise<Labels> {
  const ns = `/namespaces/${encodeURIComponent(namespace)}`;
  const slash = name.indexOf("/");
  const kind = slash < 0 ? "pod" : name.slice(0, slash).toLowerCase();
  const objectName = encodeURIComponent(slash < 0 ? name : name.slice(slash + 1));
  if (kind === "pod" || kind === "pods" || kind === "po") {
    return (await get<{ metadata: { labels?: Labels } }>(`/api/v1${ns}/pods/${objectName}`)).metadata.labels ?? {};
  }
  const owners: Record<string, string> = {
    deployment: "/apis/apps/v1{ns}/deployments/",
    statefulset: "/apis/apps/v1{ns}/statefulsets/",
    daemonset: "/apis/apps/v1{ns}/daemonsets/",
    replicaset: "/apis/apps/v1{ns}/replicasets/",
    job: "/apis/batch/v1{ns}/jobs/",
    service: "/api/v1{ns}/services/",
  };
  const aliases: Record<string, string> = {
    deploy: "deployment",
    svc: "service",
    sts: "statefulset",
    ds: "daemonset",
    rs: "replicaset",
  };
  const canonical = aliases[kind] ?? kind.replace(/s$/, "");
  const base = owners[canonical];
  if (!base)
    throw new Error(
      `cannot find the pods of a ${kind}: give a pod, deployment, statefulset, daemonset, replicaset, job or service`,
    );
  const owner = await get<{ spec?: { selector?: Selector | Record<string, string> } }>(
    base.replace("{ns}", ns) + objectName,
  );
  const raw = owner.spec?.selector ?? {};
  // A Service's selector is a plain map; a workload's a LabelSelector.
  const selector: Selector =
    canonical === "service" ? { matchLabels: raw as Record<string, string> } : (raw as Selector);
  const pods = await get<{ items: { metadata: { name: string; labels?: Labels }; status?: { phase?: string } }[] }>(
    `/api/v1${ns}/pods`,
  );
  // As kubectl picks one: running pods first, then by name.
  const matching = pods.items
    .filter((pod) => selectorMatches(selector, pod.metadata.labels ?? {}))
    .sort(
      (a, b) =>
        Number(b.status?.phase === "Running") - Number(a.status?.phase === "Running") ||
        (a.metadata.name < b.metadata.name ? -1 : 1),
    );
  const first = matching[0];
  if (!first) throw new Error(`no pods match "${name}"`);
  return first.metadata.labels ?? {};
}

/** `k=v,k2==v2` as labels; other terms select nothing here, as istioctl takes only the selector's matchLabels. */
export function labelPairs(text: string): Labels {
  const labels: Record<string, string> = {};
  for (const term of text.split(",")) {
    const pair = /^\s*([^\s!=]+)\s*==?\s*([^\s!=]*)\s*$/.exec(term);
    if (pair) labels[pair[1]] = pair[2];
  }
  return labels;
}

/** Whether the selector (none: everything) matches, and the first In/NotIn label of the object it names. */
function matchedLabel(selector: Selector | undefined, labels: Labels): { matched: boolean; label: string } {
  if (!selector) return { matched: true, label: "" };
  if (!selectorMatches(selector, labels)) return { matched: false, label: "" };
  for (const requirement of selector.matchExpressions ?? []) {
    const key = requirement.key ?? "";
    if ((requirement.operator === "In" || requirement.operator === "NotIn") && Object.hasOwn(labels, key)) {
      return { matched: true, label: `${key}=${labels[key]}` };
    }
  }
  return { matched: true, label: "" };
}

/** One configuration's verdict: the first webhook that decides, else why none matched. */
function analyzeConfiguration(
  config: MutatingWebhookConfiguration,
  podLabels: Labels,
  nsLabels: Labels,
): WebhookVerdict {
  const verdict = (injected: boolean, reason: string): WebhookVerdict => ({
    name: config.metadata.name,
    revision: config.metadata.labels?.["istio.io/rev"] ?? "",
    injected,
    reason,
  });
  const webhooks = config.webhooks ?? [];
  for (const webhook of webhooks) {
    const ns = matchedLabel(webhook.namespaceSelector, nsLabels);
    const pod = matchedLabel(webhook.objectSelector, podLabels);
    if (ns.matched && pod.matched) {
      if (ns.label !== "" && pod.label !== "")
        return verdict(true, `Namespace label ${ns.label} matches, and pod label ${pod.label} matches`);
      if (ns.label !== "") {
        const all = ns.label.includes("kubernetes.io/metadata.name")
          ? " (Automatic injection is enabled in all namespaces)."
          : "";
        return verdict(true, `Namespace label ${ns.label} matches${all}`);
      }
      if (pod.label !== "") return verdict(true, `Pod label ${pod.label} matches`);
    } else if (ns.matched) {
      for (const requirement of webhook.objectSelector?.matchExpressions ?? []) {
        const key = requirement.key ?? "";
        if (!Object.hasOwn(podLabels, key)) continue;
        const value = podLabels[key];
        if (
          requirement.operator === "DoesNotExist" ||
          (requirement.operator === "NotIn" && requirement.values?.includes(value))
        )
          return verdict(false, `Pod has ${key}=${value} label, preventing injection`);
      }
    } else if (pod.matched) {
      const value = nsLabels[INJECTION_LABEL];
      if (value !== undefined && value !== "enabled")
        return verdict(false, `Namespace has ${INJECTION_LABEL}=${value} label, preventing injection`);
    }
  }
  const inLabels = (selector: Selector | undefined) =>
    (selector?.matchExpressions ?? [])
      .filter((requirement) => requirement.operator === "In")
      .flatMap((requirement) => (requirement.values ?? []).map((value) => `${requirement.key ?? ""}=${value}`));
  const same = (a: Selector | undefined) => JSON.stringify(a) === JSON.stringify(NEVER_MATCH);
  if (webhooks.some((webhook) => same(webhook.namespaceSelector) && same(webhook.objectSelector)))
    return verdict(false, "The injection webhook is deactivated, and will never match labels.");
  const nsIn = webhooks.flatMap((webhook) => inLabels(webhook.namespaceSelector));
  const podIn = webhooks.flatMap((webhook) => inLabels(webhook.objectSelector));
  return verdict(false, `No matching namespace labels (${nsIn.join(", ")}) or pod labels (${podIn.join(", ")})`);
}

/** The verdict of every configuration with an Istio webhook, by name. */
export function analyzeWebhooks(
  configs: readonly MutatingWebhookConfiguration[],
  podLabels: Labels,
  nsLabels: Labels,
): WebhookVerdict[] {
  return configs
    .filter((config) => (config.webhooks ?? []).some((webhook) => webhook.name.endsWith("istio.io")))
    .map((config) => analyzeConfiguration(config, podLabels, nsLabels))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const GREEN = (s: string) => `\u001b[32m${s}\u001b[0m`;
const RED = (s: string) => `\u001b[31m${s}\u001b[0m`;

/**
 * istioctl's table: columns two spaces apart, always coloured ✔/✘. Its widths count a cell's bytes
 * with the colour codes while the padding subtracts the characters shown; the same sums here keep
 * the columns where istioctl puts them.
 */
export function checkInjectTable(verdicts: readonly WebhookVerdict[]): string {
  if (verdicts.length === 0) return "ERROR: no Istio injection hooks present.\n";
  const rows: { shown: string; printed: string }[][] = [
    ["WEBHOOK", "REVISION", "INJECTED", "REASON"].map((cell) => ({ shown: cell, printed: cell })),
    ...verdicts.map((v) => [
      { shown: v.name, printed: v.name },
      { shown: v.revision, printed: v.revision },
      v.injected ? { shown: "✔", printed: GREEN("✔") } : { shown: "✘", printed: RED("✘") },
      { shown: v.reason, printed: v.reason },
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => Buffer.byteLength(row[i].printed))));
  let out = "";
  for (const row of rows) {
    row.forEach((cell, i) => {
      out += cell.printed;
      out += i === row.length - 1 ? "\n" : " ".repeat(widths[i] - [...cell.shown].length + 2);
    });
  }
  // istioctl ends this line without a newline.
  if (verdicts.filter((v) => v.injected).length > 1)
    out += "ERROR: multiple webhooks will inject, which can lead to errors";
  return out;
}
