// The work of `sluice tag set|generate|list|remove` against a cluster, step for step as istioctl's
// tag command: the checks (a tag named as a revision, the revision's injector, an existing tag), the
// objects rendered from the revision's injector (src/install/tag.ts), the webhook analyzer's errors
// about them, then applied by server-side apply or printed; the tags listed from the webhooks and
// Services that carry istio.io/rev; a tag's webhooks and Service deleted.
import { createInterface } from "node:readline";
import { stringify } from "yaml";
import { ALL_ANALYZERS, formatMessages, isWorseThanOrEqualTo, runAnalysis } from "../analysis/index.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../config/index.ts";
import {
  DEFAULT_TAG,
  DEFAULT_VALIDATOR,
  type KubeObject,
  objectPath,
  REVISION_LABEL,
  renderTag,
  TAG_LABEL,
} from "../install/index.ts";
import { KubeApiError, type KubeClient } from "../sources/kube/index.ts";
import { alignTabs } from "./proxy-config-tabwriter.ts";

/**
 * Who owns the fields `sluice tag set` applies (server-side apply's field manager): istioctl's, which
 * applies tags through its kube client's ApplyYAMLContents under `istio-ci`.
 */
const FIELD_MANAGER = "istio-ci";
const ADMISSION = "/apis/admissionregistration.k8s.io/v1";
/** What istioctl sets on the default revision's injector to switch it off without deleting it. */
const NEVER_MATCH = { matchLabels: { "istio.io/deactivated": "never-match" } };

/** A tag's outcome: what to print on stdout and stderr, and the exit status (istioctl's). */
export interface TagResult {
  stdout: string;
  stderr: string;
  code: number;
}

const ok = (stdout: string): TagResult => ({ stdout, stderr: "", code: 0 });
const failed = (message: string): TagResult => ({ stdout: "", stderr: `Error: ${message}\n`, code: 1 });

/** What a tag step needs: the cluster, the Istio namespace, and how to ask the user yes or no. */
export interface TagContext {
  client: KubeClient;
  istioNamespace: string;
  /** Writes a warning to stderr at once (before a question that follows it). */
  warn: (text: string) => void;
  /** Shows the question (on stdout) and reads the answer; false when there is none. */
  confirm: (question: string) => Promise<boolean>;
}

export interface SetOptions {
  tag: string;
  revision: string;
  overwrite: boolean;
  skipConfirmation: boolean;
  webhookName?: string;
  autoInjectNamespaces: boolean;
  /** Print the objects instead of applying them (`tag generate`). */
  generate: boolean;
}

type Item = KubeObject & Record<string, unknown>;

async function list(client: KubeClient, path: string, labelSelector: string): Promise<Item[]> {
  const body = (await client.request("GET", `${path}?labelSelector=${encodeURIComponent(labelSelector)}`)) as {
    items?: Item[];
  };
  return body.items ?? [];
}

const webhooks = (client: KubeClient, labelSelector: string) =>
  list(client, `${ADMISSION}/mutatingwebhookconfigurations`, labelSelector);
const services = (ctx: TagContext, labelSelector: string) =>
  list(ctx.client, `/api/v1/namespaces/${encodeURIComponent(ctx.istioNamespace)}/services`, labelSelector);
/** A revision's own objects (its install's), not the tags pointing at it. */
const revisionWebhooks = (ctx: TagContext, revision: string) =>
  webhooks(ctx.client, `${REVISION_LABEL}=${revision},!${TAG_LABEL}`);
const revisionServices = (ctx: TagContext, revision: string) =>
  services(ctx, `${REVISION_LABEL}=${revision},!${TAG_LABEL},app=istiod`);
const tagWebhooks = (ctx: TagContext, tag: string) => webhooks(ctx.client, `${TAG_LABEL}=${tag}`);
const tagServices = (ctx: TagContext, tag: string) => services(ctx, `${TAG_LABEL}=${tag}`);

async function namespacesWithTag(client: KubeClient, tag: string): Promise<string[]> {
  return (await list(client, "/api/v1/namespaces", `${REVISION_LABEL}=${tag}`)).map((ns) => ns.metadata.name);
}

/** `tag set` and `tag generate`. */
export async function setTag(ctx: TagContext, options: SetOptions): Promise<TagResult> {
  const { tag, revision } = options;
  if (!options.generate && !options.overwrite && tag !== DEFAULT_TAG) {
    const [hooks, svcs] = await Promise.all([revisionWebhooks(ctx, tag), revisionServices(ctx, tag)]);
    if (hooks.length > 0 || svcs.length > 0)
      return failed(`cannot create revision tag "${tag}": found existing control plane revision with same name`);
  }
  const [canonical, canonicalServices] = await Promise.all([
    revisionWebhooks(ctx, revision),
    revisionServices(ctx, revision),
  ]);
  if (canonicalServices.length > 1) {
    return failed(
      `cannot modify tag: found multiple canonical services with revision "${revision}" in namespace "${ctx.istioNamespace}"`,
    );
  }
  if (canonical.length === 0 && canonicalServices.length === 0)
    return failed(`cannot modify tag: cannot find MutatingWebhookConfiguration or Service with revision "${revision}"`);
  // istioctl goes on with the Service alone and crashes; the tag is made from the injector's webhook.
  if (canonical.length === 0)
    return failed(`cannot modify tag: cannot find MutatingWebhookConfiguration with revision "${revision}"`);
  if (canonical.length > 1)
    return failed(`cannot modify tag: found multiple canonical webhooks or services with revision "${revision}"`);
  if (!options.overwrite) {
    const [hooks, svcs] = await Promise.all([tagWebhooks(ctx, tag), tagServices(ctx, tag)]);
    if (hooks.length > 0 || svcs.length > 0)
      return failed(`revision tag "${tag}" already exists, and --overwrite is false`);
  }
  let objects: KubeObject[];
  try {
    objects = renderTag(canonical[0], {
      tag,
      istioNamespace: ctx.istioNamespace,
      webhookName: options.webhookName,
      autoInjectNamespaces: options.autoInjectNamespaces,
      existingValidator: tag === DEFAULT_TAG ? await existingValidator(ctx.client) : undefined,
    });
  } catch (err) {
    return failed((err as Error).message);
  }
  if (tag === DEFAULT_TAG && !options.generate) {
    const message = await deactivateDefaultRevision(ctx);
    if (message) return failed(`failed deactivating existing default revision: ${message}`);
  }

  // istioctl checks the name of a tag in istio-system (or --webhook-name): elsewhere the webhook's
  // name ends in its namespace, so no conflict is ever found there, and none is asked about.
  const checked = options.webhookName || `istio-revision-tag-${tag}`;
  const conflicts = await conflictsOf(ctx, objects[0], checked);
  if (conflicts !== "" && !options.skipConfirmation) {
    ctx.warn(`creating tag would conflict, pass --skip-confirmation to proceed:\n${conflicts}\n`);
    if (!options.generate && !(await ctx.confirm("Apply anyways? [y/N]"))) return ok("");
  }
  if (options.generate) return ok(yamlStream(objects));
  try {
    for (const object of objects) {
      await ctx.client.patch(
        `${objectPath(object)}?fieldManager=${FIELD_MANAGER}&force=true`,
        object,
        "application/apply-patch+yaml",
      );
    }
  } catch (err) {
    return failed(
      `failed to apply tag webhook MutatingWebhookConfiguration to cluster: failed to apply tag manifests to cluster: ${(err as Error).message}`,
    );
  }
  return ok(
    `Revision tag "${tag}" created, referencing control plane revision "${revision}". To enable injection using this\n` +
      `revision tag, use 'kubectl label namespace <NAMESPACE> istio.io/rev=${tag}'\n`,
  );
}

/** The objects as istioctl prints them: keys sorted, documents joined by `\n---\n`. */
function yamlStream(objects: readonly KubeObject[]): string {
  const options = { sortMapEntries: true, indentSeq: false, lineWidth: 0, aliasDuplicateObjects: false };
  return objects.map((o) => stringify(o, options)).join("\n---\n");
}

async function existingValidator(client: KubeClient): Promise<KubeObject | undefined> {
  try {
    return (await client.request("GET", `${ADMISSION}/validatingwebhookconfigurations/${DEFAULT_VALIDATOR}`)) as Item;
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) return undefined;
    throw err;
  }
}

/**
 * The default revision's injector (istio.io/rev=default, no tag) selects nothing from now on: the tag
 * `default` takes over its namespaces. Kept, not deleted, so it can be made the default again.
 * Returns why it could not be done, or undefined.
 */
async function deactivateDefaultRevision(ctx: TagContext): Promise<string | undefined> {
  const hooks = await revisionWebhooks(ctx, DEFAULT_TAG);
  if (hooks.length === 0) return undefined;
  if (hooks.length > 1) return "expected a single webhook for default revision";
  const config = hooks[0] as Item & { webhooks?: Record<string, unknown>[] };
  const updated = {
    ...config,
    webhooks: (config.webhooks ?? []).map((w) => ({
      ...w,
      namespaceSelector: NEVER_MATCH,
      objectSelector: NEVER_MATCH,
    })),
  };
  await ctx.client.request("PUT", `${ADMISSION}/mutatingwebhookconfigurations/${config.metadata.name}`, updated);
  return undefined;
}

/**
 * The webhook analyzer's errors about the new tag webhook (named `checked`), with the cluster's injector webhooks and
 * Services beside it (a webhook overlapping another, or naming a Service that does not exist), as
 * istioctl's log lines; "" when there are none.
 */
async function conflictsOf(ctx: TagContext, tagWebhook: KubeObject, checked: string): Promise<string> {
  const [hooks, svcs] = await Promise.all([
    list(ctx.client, `${ADMISSION}/mutatingwebhookconfigurations`, ""),
    list(ctx.client, "/api/v1/services", ""),
  ]);
  const inputs = [
    ...hooks.map(withKind("MutatingWebhookConfiguration")),
    ...svcs.map(withKind("Service")),
    tagWebhook,
  ].map((object) => ({ object: object as ConfigObject }));
  const analyzer = ALL_ANALYZERS.filter((a) => a.name === "webhook.Analyzer");
  const messages = runAnalysis(inputs, {
    analyzers: analyzer,
    mesh: DEFAULT_MESH_CONFIG,
    namespace: "",
    istioNamespace: ctx.istioNamespace,
    defaultResources: false,
  }).filter(
    (m) =>
      isWorseThanOrEqualTo(m.type.level, "Error") &&
      m.resource?.object.kind === "MutatingWebhookConfiguration" &&
      m.resource.name === checked,
  );
  // istioctl reads the new webhook from an unnamed YAML source, whose empty file name still puts a
  // space after the resource's name.
  const friendly = `MutatingWebhookConfiguration ${checked}`;
  return formatMessages(messages, "log").replaceAll(`(${friendly})`, `(${friendly} )`);
}

/** One row of `tag list`. */
interface TagDescription {
  tag: string;
  revision: string;
  namespaces: string[];
}

/** `tag list`: every revision and tag the injector webhooks and istiod Services name. */
export async function listTags(ctx: TagContext, output: string): Promise<TagResult> {
  const [hooks, svcs] = await Promise.all([webhooks(ctx.client, REVISION_LABEL), services(ctx, REVISION_LABEL)]);
  // "revision\ntag", each pair once; a revision that has tags is listed only by them.
  const pairs = new Set<string>();
  for (const o of [...hooks, ...svcs]) {
    const labels = o.metadata.labels ?? {};
    pairs.add(`${labels[REVISION_LABEL]}\n${labels[TAG_LABEL] ?? ""}`);
  }
  if (pairs.size === 0) return ok("No Istio revision tags found.\n");
  const tagged = new Set([...pairs].filter((p) => !p.endsWith("\n")).map((p) => p.split("\n")[0]));
  const rows: TagDescription[] = [];
  for (const pair of pairs) {
    const [revision, tag] = pair.split("\n");
    if (tag === "" && tagged.has(revision)) continue;
    rows.push({ tag, revision, namespaces: await namespacesWithTag(ctx.client, tag) });
  }
  rows.sort((a, b) => compare(a.revision, b.revision) || compare(a.tag, b.tag));
  switch (output) {
    case "json":
      return ok(`${JSON.stringify(rows, null, "\t")}\n`);
    case "yaml":
      return ok(`${stringify(rows, { sortMapEntries: true, indentSeq: false, lineWidth: 0 })}\n`);
    case "table": {
      const lines = rows.map((r) => `${r.tag}\t${r.revision}\t${r.namespaces.join(",")}\n`);
      return ok(alignTabs(["TAG\tREVISION\tNAMESPACES\n", ...lines].join(""), { minWidth: 0, padding: 1 }));
    }
    default:
      return failed(`unknown format: ${output}`);
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `tag remove`: the tag's webhooks, its validator (the tag `default`'s) and its Service. */
export async function removeTag(ctx: TagContext, tag: string, skipConfirmation: boolean): Promise<TagResult> {
  const [hooks, svcs] = await Promise.all([tagWebhooks(ctx, tag), tagServices(ctx, tag)]);
  if (hooks.length === 0 && svcs.length === 0)
    return failed(`cannot remove tag "${tag}": cannot find MutatingWebhookConfiguration or Service for tag`);
  const namespaces = await namespacesWithTag(ctx.client, tag);
  if (namespaces.length > 0 && !skipConfirmation) {
    const question =
      `Caution, found ${namespaces.length} namespace(s) still injected by tag "${tag}": ${namespaces.join(" ")}\n` +
      "Proceed with operation? [y/N]";
    if (!(await ctx.confirm(question))) return ok("Aborting operation.\n");
  }
  const remove = async (objects: Item[], what: string) => {
    try {
      for (const o of objects) await ctx.client.request("DELETE", objectPath(o));
    } catch (err) {
      throw new Error(`failed to delete Istio revision tag ${what}: ${(err as Error).message}`);
    }
  };
  try {
    await remove(hooks.map(withKind("MutatingWebhookConfiguration")), "MutatingConfigurationWebhook");
    const validators = await list(ctx.client, `${ADMISSION}/validatingwebhookconfigurations`, `${TAG_LABEL}=${tag}`);
    await remove(validators.map(withKind("ValidatingWebhookConfiguration")), "ValidatingWebhookConfiguration");
    await remove(svcs.map(withKind("Service")), "Services");
  } catch (err) {
    return failed((err as Error).message);
  }
  return ok(`Revision tag ${tag} removed\n`);
}

/** List items carry no kind; objectPath needs one. */
const withKind =
  (kind: string) =>
  (o: Item): Item => ({ ...o, kind, apiVersion: kind === "Service" ? "v1" : "admissionregistration.k8s.io/v1" });

/**
 * Asks on stdout and reads one line of stdin, as istioctl's Confirm: y or yes is yes; n, no, an empty
 * line, more than one word or the end of input is no; anything else asks again.
 */
export async function confirmOnTerminal(question: string): Promise<boolean> {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  try {
    for (;;) {
      process.stdout.write(`${question} `);
      const next = await lines.next();
      if (next.done) return false;
      const words = next.value.trim().split(/\s+/).filter(Boolean);
      if (words.length !== 1) return false;
      const answer = words[0].toUpperCase();
      if (answer === "Y" || answer === "YES") return true;
      if (answer === "N" || answer === "NO") return false;
    }
  } finally {
    await lines.return?.();
  }
}
