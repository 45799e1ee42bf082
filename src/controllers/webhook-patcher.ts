// The caBundle of this revision's webhook configurations kept equal to the CA that signs the
// webhooks' serving certificate, as istiod's webhook patchers do (pkg/webhooks webhookpatch.go and
// validation/controller), so the API server can call sluiced: MutatingWebhookConfigurations labelled
// istio.io/rev=<revision> get it on their `*sidecar-injector.istio.io` webhooks; the
// ValidatingWebhookConfigurations labelled so get it on every webhook, and their failurePolicy moves
// from Ignore to Fail once a dry-run create of a Gateway that must be refused is refused through the
// API server (validation really reaches sluiced, so failing closed cannot lock config out). Every
// replica patches (no election), as istiod: they all write the same bundle. Configurations of other
// revisions, and unlabelled ones, are left alone.
import { type Logger, pino } from "pino";
import { type ConfigObject, type KindInfo, lookupKind, makeKind } from "../config/index.ts";
import { Informer, type InformerHandler, type KubeClient, type WatchEventType } from "../sources/kube/index.ts";
import { errorMessage, isStatus } from "./kube-requests.ts";
import { WorkQueue } from "./work-queue.ts";

const REVISION_LABEL = "istio.io/rev";
const INJECTOR_WEBHOOK_SUFFIX = "sidecar-injector.istio.io";
const ALWAYS_REJECT = "internal.istio.io/webhook-always-reject";
/** Retries of a configuration: 100 ms doubling to a minute, forever (the bundle must get there). */
const RETRY_MS = { initial: 100, max: 60_000 };

const admissionKind = (kind: string) =>
  makeKind("kubernetes", "admissionregistration.k8s.io", kind, ["v1"], { clusterScoped: true });
const MUTATING = admissionKind("MutatingWebhookConfiguration");
const VALIDATING = admissionKind("ValidatingWebhookConfiguration");
const GATEWAY = lookupKind("networking.istio.io/v1", "Gateway") as KindInfo;

interface Webhook {
  name: string;
  clientConfig?: { caBundle?: string };
  failurePolicy?: string;
}
type WebhookConfiguration = ConfigObject & { webhooks?: Webhook[] };
type Which = "mutating" | "validating";

export interface WebhookPatcherOptions {
  client: KubeClient;
  /** This control plane's revision (istio.io/rev of its configurations); default "default". */
  revision?: string;
  /** The CA bundle the webhooks' serving certificate verifies with, PEM. */
  caBundle: () => string;
  /** Tells `listener` of every change of the bundle; returns how to stop telling. */
  onCaBundleChange: (listener: () => void) => () => void;
  /** Where the dry-run Gateway is created (istiod's own namespace). */
  namespace: string;
  /** Patch the injector's configurations (INJECTION_WEBHOOK_CONFIG_NAME non-empty); default true. */
  mutating?: boolean;
  /** Patch the validator's configurations (VALIDATION_WEBHOOK_CONFIG_NAME non-empty); default true. */
  validating?: boolean;
  log?: Logger;
}

export class WebhookPatcher {
  readonly #options: WebhookPatcherOptions;
  readonly #revision: string;
  readonly #log: Logger;
  readonly #configs: Record<Which, Map<string, WebhookConfiguration>> = { mutating: new Map(), validating: new Map() };
  readonly #informers: Informer[] = [];
  /** Configurations to reconcile, as "mutating/<name>" or "validating/<name>". */
  readonly #queue: WorkQueue;
  #unsubscribe: (() => void) | undefined;
  /** Set once the API server refused the always-rejected Gateway through the validator. */
  #validationReachable = false;

  constructor(options: WebhookPatcherOptions) {
    this.#options = options;
    this.#revision = options.revision || "default";
    this.#log = options.log ?? pino({ level: "silent" });
    this.#queue = new WorkQueue({
      reconcile: (key) => {
        const [which, name] = key.split("/") as [Which, string];
        return this.#reconcile(which, name);
      },
      retryDelayMs: (retry) => Math.min(RETRY_MS.initial * 2 ** retry, RETRY_MS.max),
      onFailure: (key, err) => {
        if (err)
          this.#log.error({ webhookConfiguration: key, err: errorMessage(err) }, "webhook configuration not patched");
      },
    });
  }

  start(): void {
    const informerOptions = {
      backoff: { initialMs: 1000, maxMs: 30_000 },
      notInstalledRetryMs: 60_000,
      listPageSize: 500,
      log: this.#log,
    };
    const watch = (which: Which, kind: KindInfo) =>
      this.#informers.push(new Informer(kind, this.#options.client, this.#handler(which), informerOptions));
    if (this.#options.mutating ?? true) watch("mutating", MUTATING);
    if (this.#options.validating ?? true) watch("validating", VALIDATING);
    for (const informer of this.#informers) informer.start();
    this.#unsubscribe = this.#options.onCaBundleChange(() => this.#enqueueAll());
  }

  stop(): void {
    for (const informer of this.#informers) informer.stop();
    this.#unsubscribe?.();
    this.#queue.stop();
  }

  #handler(which: Which): InformerHandler {
    const configs = this.#configs[which];
    return {
      replaceAll: (objects: ConfigObject[]) => {
        configs.clear();
        for (const o of objects) configs.set(o.metadata.name ?? "", o);
        this.#enqueueAll();
      },
      apply: (type: WatchEventType, o: ConfigObject) => {
        const name = o.metadata.name ?? "";
        if (type === "DELETED") configs.delete(name);
        else configs.set(name, o);
        this.#queue.add(`${which}/${name}`);
      },
    };
  }

  #enqueueAll(): void {
    for (const which of ["mutating", "validating"] as const) {
      for (const name of this.#configs[which].keys()) this.#queue.add(`${which}/${name}`);
    }
  }

  /** Patches one configuration; false when it should be tried again later. */
  async #reconcile(which: Which, name: string): Promise<boolean> {
    const config = this.#configs[which].get(name);
    // Gone, not Istio's, or another revision's: nothing to do here.
    if (!config || config.metadata.labels?.[REVISION_LABEL] !== this.#revision) return true;
    const caBundle = Buffer.from(this.#options.caBundle()).toString("base64");
    const webhooks = config.webhooks ?? [];
    const patched = webhooks.filter((w) => which === "validating" || w.name.endsWith(INJECTOR_WEBHOOK_SUFFIX));
    const caChange = patched.some((w) => w.clientConfig?.caBundle !== caBundle);
    const failOpen = which === "validating" && webhooks.some((w) => w.failurePolicy && w.failurePolicy !== "Fail");
    if (!caChange && !failOpen) return true;
    // Fail closed only once the validator is known to answer; until then the bundle goes in alone.
    const failClose = failOpen && (await this.#validationAnswers());
    const updated = {
      ...config,
      webhooks: webhooks.map((w) =>
        patched.includes(w)
          ? {
              ...w,
              clientConfig: { ...w.clientConfig, caBundle },
              ...(failClose ? { failurePolicy: "Fail" } : {}),
            }
          : w,
      ),
    };
    if (caChange || failClose) {
      const plural = which === "mutating" ? MUTATING.plural : VALIDATING.plural;
      const path = `/apis/admissionregistration.k8s.io/v1/${plural}/${encodeURIComponent(name)}`;
      await this.#options.client.request("PUT", path, updated);
      this.#log.info({ webhookConfiguration: name, failClose }, "webhook configuration patched");
    }
    return !failOpen || failClose;
  }

  /**
   * Whether the API server refuses a Gateway the validator always refuses (istiod's
   * isDryRunOfInvalidConfigRejected): a dry run, so nothing is stored. Remembered once true.
   */
  async #validationAnswers(): Promise<boolean> {
    if (this.#validationReachable) return true;
    const namespace = this.#options.namespace;
    const gateway = {
      apiVersion: `${GATEWAY.group}/${GATEWAY.preferredVersion}`,
      kind: GATEWAY.kind,
      metadata: {
        name: "invalid-gateway",
        namespace,
        labels: { [REVISION_LABEL]: this.#revision },
        annotations: { [ALWAYS_REJECT]: "true" },
      },
      spec: {},
    };
    const path = `/apis/${GATEWAY.group}/${GATEWAY.preferredVersion}/namespaces/${encodeURIComponent(namespace)}/${GATEWAY.plural}`;
    let reason: string;
    try {
      await this.#options.client.request("POST", `${path}?dryRun=All`, gateway);
      reason = "the always-rejected Gateway was not rejected";
    } catch (err) {
      const message = errorMessage(err);
      // Refused by a webhook; or no Gateway CRD, or a webhook without dry-run support: nothing to wait for.
      if (
        message.includes("denied the request") ||
        isStatus(err, 404) ||
        message.includes("the server could not find the requested resource") ||
        message.includes("does not support dry run")
      ) {
        this.#validationReachable = true;
        this.#log.info("the validation webhook refused invalid config: switching to fail-closed");
        return true;
      }
      reason = `refused for another reason: ${message}`;
    }
    this.#log.info({ reason }, "not yet switching validation to fail-closed");
    return false;
  }
}
