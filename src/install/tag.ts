// A revision tag's objects, as istioctl's `tag generate` renders them: a MutatingWebhookConfiguration
// `istio-revision-tag-<tag>` that sends pods of namespaces labelled istio.io/rev=<tag> to the tagged
// revision's injector, a Service `istiod-revision-tag-<tag>` selecting that revision's pods, and for
// the tag `default` also the webhooks for istio-injection=enabled and the `istiod-default-validator`.
// The injector's address (service or URL, path, caBundle), reinvocation policy, labels and
// annotations come from the revision's own injector configuration in the cluster (its "canonical"
// webhook), as istioctl derives them, so a tag works for any install of the revision.
import { commonLabels, ISTIOD_PORTS, type KubeObject, VALIDATION_RULES } from "./render.ts";

export const REVISION_LABEL = "istio.io/rev";
export const TAG_LABEL = "istio.io/tag";
export const DEFAULT_TAG = "default";
export const DEFAULT_VALIDATOR = "istiod-default-validator";
const INJECTOR_SUFFIX = "sidecar-injector.istio.io";

type Selector = { matchExpressions: Record<string, unknown>[] };
type Webhook = Record<string, unknown> & {
  name: string;
  clientConfig?: {
    url?: string;
    caBundle?: string;
    service?: { name?: string; namespace?: string; path?: string; port?: number };
  };
  reinvocationPolicy?: string;
  failurePolicy?: string;
};
type WebhookConfiguration = KubeObject & { webhooks?: Webhook[] };

export interface TagOptions {
  tag: string;
  istioNamespace: string;
  /** Another name for the MutatingWebhookConfiguration (istioctl's --webhook-name). */
  webhookName?: string;
  /** The tag `default` also injects namespaces with no label at all (--auto-inject-namespaces). */
  autoInjectNamespaces?: boolean;
  /** The `istiod-default-validator` in the cluster, whose failure policy the new one keeps. */
  existingValidator?: WebhookConfiguration;
}

/** The tag's MutatingWebhookConfiguration, the validator when the tag is `default`, and the Service. */
export function renderTag(canonical: WebhookConfiguration, options: TagOptions): KubeObject[] {
  const source = injectorOf(canonical);
  const revLabel = canonical.metadata.labels?.[REVISION_LABEL] ?? "";
  const revision = revLabel === DEFAULT_TAG ? "" : revLabel;
  const ns = options.istioNamespace;
  const labels = (chart: Record<string, string>) =>
    withoutOperatorLabels({ ...chart, ...commonLabels(), ...withoutApp(canonical.metadata.labels ?? {}) });
  const objects: KubeObject[] = [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: {
        // Istio's chart names a tag outside istio-system after its namespace too.
        name:
          options.webhookName ||
          (ns === "istio-system" ? `istio-revision-tag-${options.tag}` : `istio-revision-tag-${options.tag}-${ns}`),
        labels: labels({
          [TAG_LABEL]: options.tag,
          [REVISION_LABEL]: revLabel || DEFAULT_TAG,
          app: "sidecar-injector",
          release: "istio",
          "app.kubernetes.io/name": "istiod",
        }),
        ...annotationsOf(canonical),
      },
      webhooks: injectionWebhooks(options, source, revision),
    },
  ];
  if (options.tag === DEFAULT_TAG) objects.push(defaultValidator(options, source, revision, labels));
  objects.push(tagService(options, revision));
  return objects;
}

/** What a tag webhook takes from the revision's first injector webhook. */
interface InjectorSource {
  url?: string;
  service?: string;
  path?: string;
  caBundle?: string;
  reinvocationPolicy?: string;
}

function injectorOf(canonical: WebhookConfiguration): InjectorSource {
  const hook = (canonical.webhooks ?? []).find((w) => w.name.endsWith(INJECTOR_SUFFIX));
  if (!hook) {
    throw new Error(
      `failed to create tag webhook config: could not find sidecar-injector webhook in canonical webhook "${canonical.metadata.name}"`,
    );
  }
  const config = hook.clientConfig ?? {};
  return {
    url: config.url,
    service: config.service?.name,
    path: config.service?.path,
    caBundle: config.caBundle,
    reinvocationPolicy: hook.reinvocationPolicy,
  };
}

const isIn = (key: string, ...values: string[]) => ({ key, operator: "In", values });
const notIn = (key: string, ...values: string[]) => ({ key, operator: "NotIn", values });
const absent = (key: string) => ({ key, operator: "DoesNotExist" });
const selector = (...matchExpressions: Record<string, unknown>[]): Selector => ({ matchExpressions });

function injectionWebhooks(options: TagOptions, source: InjectorSource, revision: string): Webhook[] {
  const hook = (prefix: string, namespaceSelector: Selector, objectSelector: Selector): Webhook => ({
    name: `${prefix}${INJECTOR_SUFFIX}`,
    admissionReviewVersions: ["v1"],
    clientConfig: {
      ...(source.caBundle ? { caBundle: source.caBundle } : {}),
      ...(source.url
        ? { url: source.url }
        : {
            service: {
              name: source.service ?? istiodName(revision),
              namespace: options.istioNamespace,
              path: source.path ?? "",
              port: 443,
            },
          }),
    },
    failurePolicy: "Fail",
    namespaceSelector,
    objectSelector,
    reinvocationPolicy: source.reinvocationPolicy || "Never",
    rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
    sideEffects: "None",
  });
  const notOptedOut = notIn("sidecar.istio.io/inject", "false");
  const webhooks = [
    hook(
      "rev.namespace.",
      selector(isIn(REVISION_LABEL, options.tag), absent("istio-injection")),
      selector(notOptedOut),
    ),
    hook(
      "rev.object.",
      selector(absent(REVISION_LABEL), absent("istio-injection")),
      selector(notOptedOut, isIn(REVISION_LABEL, options.tag)),
    ),
  ];
  if (options.tag !== DEFAULT_TAG) return webhooks;
  // The default tag takes over what the default revision's injector did: istio-injection=enabled
  // namespaces and opted-in pods of unlabelled ones.
  webhooks.push(
    hook("namespace.", selector(isIn("istio-injection", "enabled")), selector(notOptedOut)),
    hook(
      "object.",
      selector(absent("istio-injection"), absent(REVISION_LABEL)),
      selector(isIn("sidecar.istio.io/inject", "true"), absent(REVISION_LABEL)),
    ),
  );
  if (options.autoInjectNamespaces) {
    webhooks.push(
      hook(
        "auto.",
        selector(
          absent("istio-injection"),
          absent(REVISION_LABEL),
          notIn("kubernetes.io/metadata.name", "kube-system", "kube-public", "kube-node-lease", "local-path-storage"),
        ),
        selector(absent("sidecar.istio.io/inject"), absent(REVISION_LABEL)),
      ),
    );
  }
  return webhooks;
}

/**
 * The default revision's validator, pointed at the tagged revision (at its injector's URL with the
 * path /validate, when it is called by URL). A webhook that istiod already switched to Fail keeps
 * failing closed: istioctl then leaves failurePolicy out, which the API server defaults to Fail.
 */
function defaultValidator(
  options: TagOptions,
  source: InjectorSource,
  revision: string,
  labels: (chart: Record<string, string>) => Record<string, string>,
): KubeObject {
  const name = "validation.istio.io";
  const existing = options.existingValidator?.webhooks?.find((w) => w.name === name);
  const failurePolicy = existing === undefined ? "Ignore" : existing.failurePolicy;
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: {
      name: DEFAULT_VALIDATOR,
      labels: labels({
        app: "istiod",
        istio: "istiod",
        [REVISION_LABEL]: revision || DEFAULT_TAG,
        [TAG_LABEL]: DEFAULT_TAG,
        "app.kubernetes.io/name": "istiod",
      }),
    },
    webhooks: [
      {
        name,
        admissionReviewVersions: ["v1"],
        clientConfig: {
          ...(source.caBundle ? { caBundle: source.caBundle } : {}),
          ...(source.url
            ? { url: validationUrl(source.url) }
            : { service: { name: istiodName(revision), namespace: options.istioNamespace, path: "/validate" } }),
        },
        ...(failurePolicy && failurePolicy !== "Fail" ? { failurePolicy } : {}),
        objectSelector: selector(absent(REVISION_LABEL)),
        rules: VALIDATION_RULES,
        sideEffects: "None",
      },
    ],
  };
}

/** The injector's URL with the path /validate (as it is, when it does not parse). */
function validationUrl(injectionUrl: string): string {
  try {
    const url = new URL(injectionUrl);
    url.pathname = "/validate";
    return url.toString();
  } catch {
    return injectionUrl;
  }
}

/** The revision's istiod ports under the tag's name, so `istiod-revision-tag-<tag>` reaches it. */
function tagService(options: TagOptions, revision: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: `istiod-revision-tag-${options.tag}`,
      namespace: options.istioNamespace,
      labels: {
        [REVISION_LABEL]: revision || DEFAULT_TAG,
        [TAG_LABEL]: options.tag,
        app: "istiod",
        istio: "pilot",
        release: "istio",
        "app.kubernetes.io/name": "istiod",
        ...commonLabels(),
      },
    },
    spec: {
      ports: ISTIOD_PORTS,
      selector: revision === "" ? { app: "istiod", istio: "pilot" } : { app: "istiod", [REVISION_LABEL]: revision },
    },
  };
}

const istiodName = (revision: string) => (revision === "" ? "istiod" : `istiod-${revision}`);

/** The canonical webhook's labels but `app`, which names what that object is. */
function withoutApp(labels: Record<string, string>): Record<string, string> {
  const { app: _app, ...rest } = labels;
  return rest;
}

/** A tag is the user's, not the installer's: labels by which an installer finds its objects go. */
function withoutOperatorLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([key]) => !key.includes("operator.istio.io")));
}

function annotationsOf(canonical: KubeObject): { annotations?: Record<string, string> } {
  const annotations = canonical.metadata.annotations;
  return annotations && Object.keys(annotations).length > 0 ? { annotations } : {};
}
