// Where a self-signed CA keeps its root and key between restarts: the Kubernetes Secret
// `istio-ca-secret` in the system namespace (Istio's choice), a directory (`--caDir`), or memory
// (Istio's no-Kubernetes "debug" CA, lost on restart). Entries are Istio's file names.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiException, CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";

/** The entries of `istio-ca-secret`, by Istio's key names. */
export interface CaSecretData {
  /** The signing (root) certificate. */
  "ca-cert.pem": string;
  "ca-key.pem": string;
  /** The trust bundle: roots still trusted after a rotation, then the current one. */
  "root-cert.pem": string;
}

export const CA_SECRET_NAME = "istio-ca-secret";
/** Istio's Secret type for it. */
const CA_SECRET_TYPE = "istio.io/ca-root";
const KEYS = ["ca-cert.pem", "ca-key.pem", "root-cert.pem"] as const;

export interface CaSecretStore {
  /** Where it is, for log lines. */
  readonly location: string;
  load(): Promise<CaSecretData | undefined>;
  /** Stores the first root; false when one already exists (another replica made it first). */
  create(data: CaSecretData): Promise<boolean>;
  update(data: CaSecretData): Promise<void>;
}

export class MemoryCaStore implements CaSecretStore {
  readonly location = "memory";
  #data: CaSecretData | undefined;

  async load(): Promise<CaSecretData | undefined> {
    return this.#data;
  }

  async create(data: CaSecretData): Promise<boolean> {
    if (this.#data) return false;
    this.#data = { ...data };
    return true;
  }

  async update(data: CaSecretData): Promise<void> {
    this.#data = { ...data };
  }
}

/** A directory holding ca-cert.pem, ca-key.pem (mode 0600) and root-cert.pem. */
export class FileCaStore implements CaSecretStore {
  constructor(readonly location: string) {}

  async load(): Promise<CaSecretData | undefined> {
    const path = (name: string) => join(this.location, name);
    if (!existsSync(path("ca-cert.pem")) || !existsSync(path("ca-key.pem"))) return undefined;
    const read = (name: string) => (existsSync(path(name)) ? readFileSync(path(name), "utf8") : "");
    return {
      "ca-cert.pem": read("ca-cert.pem"),
      "ca-key.pem": read("ca-key.pem"),
      "root-cert.pem": read("root-cert.pem"),
    };
  }

  async create(data: CaSecretData): Promise<boolean> {
    if (await this.load()) return false;
    await this.update(data);
    return true;
  }

  async update(data: CaSecretData): Promise<void> {
    mkdirSync(this.location, { recursive: true, mode: 0o700 });
    // Each file is replaced whole (write, then rename), so a reader never sees half of one.
    for (const name of KEYS) {
      const target = join(this.location, name);
      const temporary = `${target}.tmp`;
      writeFileSync(temporary, data[name], { mode: 0o600 });
      chmodSync(temporary, 0o600);
      renameSync(temporary, target);
    }
  }
}

/** The Secret `istio-ca-secret` in the system namespace, through client-node's CoreV1Api. */
export class KubeCaSecretStore implements CaSecretStore {
  readonly location: string;
  readonly #api: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    readonly name = CA_SECRET_NAME,
  ) {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
    this.location = `secret ${namespace}/${name}`;
  }

  async load(): Promise<CaSecretData | undefined> {
    const secret = await this.#read();
    if (!secret) return undefined;
    const decode = (key: string) => Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
    return {
      "ca-cert.pem": decode("ca-cert.pem"),
      "ca-key.pem": decode("ca-key.pem"),
      "root-cert.pem": decode("root-cert.pem"),
    };
  }

  async create(data: CaSecretData): Promise<boolean> {
    try {
      await this.#api.createNamespacedSecret({ namespace: this.namespace, body: this.#secret(data) });
      return true;
    } catch (err) {
      if (err instanceof ApiException && err.code === 409) return false;
      throw err;
    }
  }

  /** Replaces the entries, keeping whatever else the Secret holds; the resourceVersion guards against lost updates. */
  async update(data: CaSecretData): Promise<void> {
    const current = await this.#read();
    if (!current) throw new Error(`${this.location} does not exist`);
    const body = this.#secret(data);
    body.metadata = { ...current.metadata, name: this.name, namespace: this.namespace };
    body.data = { ...current.data, ...body.data };
    await this.#api.replaceNamespacedSecret({ name: this.name, namespace: this.namespace, body });
  }

  async #read(): Promise<V1Secret | undefined> {
    try {
      return await this.#api.readNamespacedSecret({ name: this.name, namespace: this.namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  #secret(data: CaSecretData): V1Secret {
    const encoded: Record<string, string> = {};
    for (const key of KEYS) encoded[key] = Buffer.from(data[key], "utf8").toString("base64");
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: this.name, namespace: this.namespace },
      type: CA_SECRET_TYPE,
      data: encoded,
    };
  }
}
