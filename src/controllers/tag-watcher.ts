// Which revision tags name this control plane's revision, as istiod's tag watcher (pkg/revisions
// tag_watcher.go) and default watcher (default_watcher.go) learn them: a tag is a
// MutatingWebhookConfiguration labelled istio.io/tag=<tag> and istio.io/rev=<revision> (what `sluice tag
// set` and `istioctl tag set` make), or a Service of the system namespace labelled so; the default
// revision is the one the ValidatingWebhookConfiguration istiod-default-validator is labelled with.
// `isMine` is istiod's IsMine, which decides whose Gateway deployments, and whose Gateway API and
// Ingress statuses, an object's istio.io/rev (else its namespace's) selects. Elections take the default
// revision from the default tag's webhook (`defaultTagRevision`), as istiod's DefaultWatcher does.
import { type Logger, pino } from "pino";
import { type ConfigObject, type KindInfo, makeKind } from "../config/index.ts";
import { Informer, type InformerHandler, type KubeClient, type WatchEventType } from "../sources/kube/index.ts";

const REVISION_LABEL = "istio.io/rev";
const TAG_LABEL = "istio.io/tag";
export const DEFAULT_TAG_WEBHOOK = "istio-revision-tag-default";
export const DEFAULT_REVISION_VALIDATOR = "istiod-default-validator";

const admissionKind = (kind: string) =>
  makeKind("kubernetes", "admissionregistration.k8s.io", kind, ["v1"], { clusterScoped: true });
const MUTATING = admissionKind("MutatingWebhookConfiguration");
const VALIDATING = admissionKind("ValidatingWebhookConfiguration");
const SERVICE = makeKind("kubernetes", "", "Service", ["v1"]);

type Labels = Readonly<Record<string, string>>;

/** What decides whether an object is this revision's; the Gateway deployment controller's view of it. */
export interface RevisionTags {
  /** Whether `meta` (an object's labels and namespace) selects this revision; `namespaceLabels` undefined: no such namespace. */
  isMine(meta: { labels?: Labels }, namespaceLabels: Labels | undefined): boolean;
  /** Tells `listener` of every change of the tags (or the default tag or revision); returns how to stop telling. */
  onChange(listener: () => void): () => void;
}

export interface TagWatcherOptions {
  client: KubeClient;
  /** This control plane's revision; "" is "default". */
  revision: string;
  /** Where tag Services are looked for (POD_NAMESPACE). */
  systemNamespace: string;
  log?: Logger;
}

/** Who owns what, at one moment. */
interface TagState {
  revision: string;
  /** The labels of every MutatingWebhookConfiguration, by name; tags are those labelled istio.io/tag. */
  webhooks: ReadonlyMap<string, Labels>;
  /** The labels of the system namespace's Services, by name; tags are those labelled istio.io/tag. */
  services: ReadonlyMap<string, Labels>;
  /** The istio.io/rev of istiod-default-validator, "" without one. */
  defaultRevision: string;
}

/** istiod's GetMyTags: the revision, and the tags of webhooks and Services naming it. */
function myTagsOf(state: TagState): Set<string> {
  const tags = new Set([state.revision]);
  for (const labels of [...state.webhooks.values(), ...state.services.values()]) {
    const tag = labels[TAG_LABEL];
    if (tag !== undefined && labels[REVISION_LABEL] === state.revision) tags.add(tag);
  }
  return tags;
}

/**
 * istiod's IsMine: the object's istio.io/rev, else its namespace's (an object of no known namespace is
 * everyone's), names one of this revision's tags; an unlabelled one is this revision's when the default
 * tag names it, or when it is the default revision and no default tag names another.
 */
export function isMineIn(state: TagState, labels: Labels | undefined, namespaceLabels: Labels | undefined): boolean {
  let selected = labels?.[REVISION_LABEL];
  if (selected === undefined) {
    if (namespaceLabels === undefined) return true;
    selected = namespaceLabels[REVISION_LABEL] ?? "";
  }
  const tags = myTagsOf(state);
  if (tags.has(selected)) return true;
  if (selected !== "") return false;
  if (tags.has("default")) return true;
  const otherDefaultTag = isTag(state.webhooks.get(DEFAULT_TAG_WEBHOOK));
  return state.defaultRevision === state.revision && !otherDefaultTag;
}

export class TagWatcher implements RevisionTags {
  readonly #options: TagWatcherOptions;
  readonly #revision: string;
  readonly #log: Logger;
  readonly #webhooks = new Map<string, Labels>();
  readonly #services = new Map<string, Labels>();
  #defaultRevision = "";
  readonly #informers: Informer[] = [];
  readonly #listeners = new Set<() => void>();
  #fingerprint = "";
  #synced = false;
  /** Settles once every informer has listed once. */
  readonly synced: Promise<void>;
  #markSynced: () => void = () => {};

  constructor(options: TagWatcherOptions) {
    this.#options = options;
    this.#revision = options.revision || "default";
    this.#log = options.log ?? pino({ level: "silent" });
    this.synced = new Promise((resolve) => {
      this.#markSynced = resolve;
    });
  }

  start(): void {
    if (this.#informers.length > 0) return;
    const base = { backoff: { initialMs: 1000, maxMs: 30_000 }, notInstalledRetryMs: 60_000, listPageSize: 500 };
    const watch = (kind: KindInfo, handler: InformerHandler, more: { namespace?: string; fieldSelector?: string }) =>
      this.#informers.push(new Informer(kind, this.#options.client, handler, { ...base, ...more, log: this.#log }));
    // Every MutatingWebhookConfiguration is listed, as istiod's clients list them.
    watch(MUTATING, this.#labelsHandler(this.#webhooks), {});
    watch(
      VALIDATING,
      {
        replaceAll: (objects) => {
          this.#defaultRevision = objects[0] ? labelOf(objects[0], REVISION_LABEL) : "";
          this.#changed();
        },
        apply: (type, o) => {
          this.#defaultRevision = type === "DELETED" ? "" : labelOf(o, REVISION_LABEL);
          this.#changed();
        },
      },
      { fieldSelector: `metadata.name=${DEFAULT_REVISION_VALIDATOR}` },
    );
    watch(SERVICE, this.#labelsHandler(this.#services), { namespace: this.#options.systemNamespace });
    for (const informer of this.#informers) informer.start();
    void Promise.all(this.#informers.map((i) => i.synced)).then(() => {
      this.#synced = true;
      this.#markSynced();
      this.#changed();
    });
  }

  stop(): void {
    for (const informer of this.#informers.splice(0)) informer.stop();
    this.#listeners.clear();
  }

  /** The revision and every tag naming it. */
  myTags(): Set<string> {
    return myTagsOf(this.#state());
  }

  isMine(meta: { labels?: Labels }, namespaceLabels: Labels | undefined): boolean {
    return isMineIn(this.#state(), meta.labels, namespaceLabels);
  }

  /** The revision the default tag's webhook names ("" without one): istiod's DefaultWatcher, for elections. */
  defaultTagRevision(): string {
    return this.#webhooks.get(DEFAULT_TAG_WEBHOOK)?.[REVISION_LABEL] ?? "";
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #state(): TagState {
    return {
      revision: this.#revision,
      webhooks: this.#webhooks,
      services: this.#services,
      defaultRevision: this.#defaultRevision,
    };
  }

  /** Keeps every object's labels by name (tags are told apart by reading them). */
  #labelsHandler(into: Map<string, Labels>): InformerHandler {
    return {
      replaceAll: (objects: ConfigObject[]) => {
        into.clear();
        for (const o of objects) into.set(o.metadata.name ?? "", o.metadata.labels ?? {});
        this.#changed();
      },
      apply: (type: WatchEventType, o: ConfigObject) => {
        if (type === "DELETED") into.delete(o.metadata.name ?? "");
        else into.set(o.metadata.name ?? "", o.metadata.labels ?? {});
        this.#changed();
      },
    };
  }

  /** Tells the listeners once the tags, the default tag or the default revision changed (after the first sync). */
  #changed(): void {
    if (!this.#synced) return;
    const state = this.#state();
    const fingerprint = JSON.stringify([
      [...myTagsOf(state)].sort(),
      isTag(state.webhooks.get(DEFAULT_TAG_WEBHOOK)),
      state.defaultRevision,
      this.defaultTagRevision(),
    ]);
    if (fingerprint === this.#fingerprint) return;
    const first = this.#fingerprint === "";
    this.#fingerprint = fingerprint;
    this.#log.info(
      { tags: [...myTagsOf(state)], defaultRevision: state.defaultRevision, defaultTag: this.defaultTagRevision() },
      first ? "revision tags" : "revision tags changed",
    );
    for (const listener of this.#listeners) listener();
  }
}

const isTag = (labels: Labels | undefined) => labels !== undefined && TAG_LABEL in labels;

function labelOf(o: ConfigObject, name: string): string {
  return o.metadata.labels?.[name] ?? "";
}
