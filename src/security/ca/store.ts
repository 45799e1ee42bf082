// Where a self-signed CA keeps its root and key between restarts: the Kubernetes Secret
// `istio-ca-secret` in the system namespace (Istio's choice, kube-store.ts), a directory (`--caDir`),
// or memory (Istio's no-Kubernetes "debug" CA, lost on restart). Entries are Istio's file names.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The entries of `istio-ca-secret`, by Istio's key names. */
export interface CaSecretData {
  /** The signing (root) certificate. */
  "ca-cert.pem": string;
  "ca-key.pem": string;
  /** The trust bundle: roots still trusted after a rotation, then the current one. */
  "root-cert.pem": string;
}

export const CA_SECRET_NAME = "istio-ca-secret";
/** The entries' names, in the order they are written. */
export const CA_SECRET_KEYS = ["ca-cert.pem", "ca-key.pem", "root-cert.pem"] as const;

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
    for (const name of CA_SECRET_KEYS) {
      const target = join(this.location, name);
      const temporary = `${target}.tmp`;
      writeFileSync(temporary, data[name], { mode: 0o600 });
      chmodSync(temporary, 0o600);
      renameSync(temporary, target);
    }
  }
}
