// Istio's injector config (inject.Config: the `config` key of the istio-sidecar-injector ConfigMap, or
// a mounted config file) and Helm values (the `values` key) made into the injection settings, and
// kept as they change. The config's `templates` are Go template text, which Sluice does not run: a
// name Sluice has a built-in template for gets the built-in; any other is refused at injection.
import type { Logger } from "pino";
import { parse as parseYaml } from "yaml";
import type { LabelSelector } from "../../sources/kube/labels.ts";
import { type InjectionPolicy, type InjectionSettings, injectionSettingsFromValues } from "./settings.ts";
import { TEMPLATES } from "./templates.ts";

/** What Sluice applies of Istio's inject.Config; an absent field keeps what the values say. */
export interface InjectorConfig {
  policy?: InjectionPolicy;
  alwaysInjectSelector?: LabelSelector[];
  neverInjectSelector?: LabelSelector[];
  injectedAnnotations?: Record<string, string>;
  defaultTemplates?: string[];
  aliases?: Record<string, string[]>;
  /** The names of its `templates`. */
  templates: string[];
}

type Fields = Record<string, unknown>;

function isMap(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The field `name` checked, or undefined when absent or null (Go's zero value); `prefix` is its parent's path. */
function field<T>(from: Fields, name: string, check: (value: unknown, at: string) => T, prefix = ""): T | undefined {
  const value = from[name];
  return value === null || value === undefined ? undefined : check(value, `${prefix}${name}`);
}

function string(value: unknown, at: string): string {
  if (typeof value !== "string") throw new Error(`${at}: expected a string, found ${JSON.stringify(value)}`);
  return value;
}

function list<T>(item: (value: unknown, at: string) => T) {
  return (value: unknown, at: string): T[] => {
    if (!Array.isArray(value)) throw new Error(`${at}: expected a list, found ${JSON.stringify(value)}`);
    return value.map((v, i) => item(v, `${at}[${i}]`));
  };
}

function map<T>(item: (value: unknown, at: string) => T) {
  return (value: unknown, at: string): Record<string, T> => {
    if (!isMap(value)) throw new Error(`${at}: expected a map, found ${JSON.stringify(value)}`);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, item(v, `${at}.${k}`)]));
  };
}

function labelSelector(value: unknown, at: string): LabelSelector {
  if (!isMap(value)) throw new Error(`${at}: expected a label selector, found ${JSON.stringify(value)}`);
  const requirement = (v: unknown, where: string) => {
    if (!isMap(v)) throw new Error(`${where}: expected a map, found ${JSON.stringify(v)}`);
    return {
      key: field(v, "key", string, `${where}.`),
      operator: field(v, "operator", string, `${where}.`),
      values: field(v, "values", list(string), `${where}.`),
    };
  };
  return {
    matchLabels: field(value, "matchLabels", map(string), `${at}.`),
    matchExpressions: field(value, "matchExpressions", list(requirement), `${at}.`),
  };
}

function policy(value: unknown, at: string): InjectionPolicy {
  // Istio takes any other value and then injects no pod at all; a typo is refused here instead.
  if (value !== "enabled" && value !== "disabled") {
    throw new Error(`${at}: ${JSON.stringify(value)} is not one of "enabled", "disabled"`);
  }
  return value;
}

/** The config YAML read as Istio's UnmarshalConfig reads it; throws an Error saying what is wrong. */
export function parseInjectorConfig(text: string): InjectorConfig {
  const root: unknown = parseYaml(text) ?? {};
  if (!isMap(root)) throw new Error(`expected a map, found ${JSON.stringify(root)}`);
  const defaultTemplates = field(root, "defaultTemplates", list(string));
  return {
    policy: field(root, "policy", policy),
    alwaysInjectSelector: field(root, "alwaysInjectSelector", list(labelSelector)),
    neverInjectSelector: field(root, "neverInjectSelector", list(labelSelector)),
    injectedAnnotations: field(root, "injectedAnnotations", map(string)),
    // Istio: none is ["sidecar"].
    defaultTemplates: defaultTemplates?.length ? defaultTemplates : undefined,
    aliases: field(root, "aliases", map(list(string))),
    templates: Object.keys(field(root, "templates", map(string)) ?? {}),
  };
}

/** The Helm values (YAML or JSON) as a map; throws an Error when they are not one. */
export function parseInjectionValues(text: string): Fields {
  const root: unknown = parseYaml(text) ?? {};
  if (!isMap(root)) throw new Error(`expected a map, found ${JSON.stringify(root)}`);
  return root;
}

/** The settings the values describe, with what the config says over them. */
export function injectionSettings(config: InjectorConfig | undefined, values: Fields): InjectionSettings {
  const settings = injectionSettingsFromValues(values);
  if (!config) return settings;
  return {
    ...settings,
    policy: config.policy ?? settings.policy,
    alwaysInjectSelector: config.alwaysInjectSelector ?? settings.alwaysInjectSelector,
    neverInjectSelector: config.neverInjectSelector ?? settings.neverInjectSelector,
    injectedAnnotations: config.injectedAnnotations ?? settings.injectedAnnotations,
    defaultTemplates: config.defaultTemplates ?? settings.defaultTemplates,
    aliases: config.aliases ?? settings.aliases,
    customTemplates: config.templates.filter((name) => !Object.hasOwn(TEMPLATES, name)),
  };
}

/** The two texts of Istio's injection config; undefined is missing. */
export interface InjectionTexts {
  config: string | undefined;
  values: string | undefined;
}

const KEYS = ["config", "values"] as const;

export interface InjectionSettingsWatcherOptions {
  /** Where each text comes from ("ConfigMap istio-system/istio-sidecar-injector key config", a file), for logs. */
  from: { config: string; values: string };
  /** The control plane's revision, in place of the values' (REVISION). */
  revision: string;
  log: Logger;
}

/**
 * The injection settings of the current texts. A text that does not parse, or goes missing, is
 * logged and changes nothing: the last good one stays (istiod's injector keeps its config too).
 */
export class InjectionSettingsWatcher {
  #texts: InjectionTexts;
  #config: InjectorConfig | undefined;
  #values: Fields = {};
  #settings: Readonly<InjectionSettings>;
  readonly #options: InjectionSettingsWatcherOptions;
  readonly #listeners = new Set<() => void>();

  /** Throws when a text does not parse, as istiod will not start then. */
  constructor(texts: InjectionTexts, options: InjectionSettingsWatcherOptions) {
    this.#options = options;
    this.#texts = texts;
    for (const key of KEYS) {
      const text = texts[key];
      if (text === undefined) continue;
      try {
        this.#parse(key, text);
      } catch (err) {
        throw new Error(`${options.from[key]}: ${(err as Error).message}`);
      }
    }
    this.#settings = this.#build(texts.config !== undefined);
  }

  get settings(): Readonly<InjectionSettings> {
    return this.#settings;
  }

  /** Takes the texts given (a key left out is unchanged). */
  update(texts: Partial<InjectionTexts>): void {
    const log = this.#options.log;
    let configChanged = false;
    let changed = false;
    for (const key of KEYS) {
      if (!(key in texts) || texts[key] === this.#texts[key]) continue;
      const text = texts[key];
      this.#texts = { ...this.#texts, [key]: text };
      const from = this.#options.from[key];
      if (text === undefined) {
        log.warn({ from }, "injection settings not changed: the text is missing");
        continue;
      }
      try {
        this.#parse(key, text);
      } catch (err) {
        log.error({ from, err: (err as Error).message }, "injection settings not changed: the text does not parse");
        continue;
      }
      changed = true;
      configChanged ||= key === "config";
    }
    if (!changed) return;
    this.#settings = this.#build(configChanged);
    log.info({ from: this.#options.from }, "injection settings changed");
    for (const listener of this.#listeners) listener();
  }

  /** Calls `listener` after each change of the settings; returns how to stop. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #parse(key: keyof InjectionTexts, text: string): void {
    if (key === "config") this.#config = parseInjectorConfig(text);
    else this.#values = parseInjectionValues(text);
  }

  /** The settings of the current texts; the templates that will not run are warned of when `warnTemplates`. */
  #build(warnTemplates: boolean): InjectionSettings {
    const settings = { ...injectionSettings(this.#config, this.#values), revision: this.#options.revision };
    for (const template of warnTemplates ? settings.customTemplates : []) {
      // Not a pod's: the Gateway deployment controller has its built-ins.
      if (template === "kube-gateway" || template === "waypoint") continue;
      this.#options.log.warn(
        { from: this.#options.from.config, template },
        "injection template not run: Sluice has no built-in template of this name and does not run Go templates; pods asking for it are refused",
      );
    }
    return settings;
  }
}
