// The CA's root in the Kubernetes Secret `istio-ca-secret` (Istio's choice). Apart from store.ts so that
// sluiced loads the Kubernetes client only when it has a cluster.
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, KubeClient } from "../../sources/kube/index.ts";
import { CA_SECRET_KEYS, CA_SECRET_NAME, type CaSecretData, type CaSecretStore } from "./store.ts";

/** Istio's Secret type for it. */
const CA_SECRET_TYPE = "istio.io/ca-root";

interface Secret {
  apiVersion: "v1";
  kind: "Secret";
  metadata: { name: string; namespace: string; resourceVersion?: string } & Record<string, unknown>;
  type?: string;
  data?: Record<string, string>;
}

/**
 * The Secret `istio-ca-secret` in the system namespace, through sluiced's KubeClient: written, as
 * istiod writes it, under the field manager pilot-discovery (its user agent's).
 */
export class KubeCaSecretStore implements CaSecretStore {
  readonly location: string;
  readonly #client: KubeClient;
  readonly #path: string;

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    readonly name = CA_SECRET_NAME,
  ) {
    this.#client = new KubeClient(kubeConfig);
    this.#path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
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
      await this.#client.request("POST", this.#path, this.#secret(data));
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) return false;
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
    await this.#client.request("PUT", `${this.#path}/${encodeURIComponent(this.name)}`, body);
  }

  async #read(): Promise<Secret | undefined> {
    try {
      return (await this.#client.request("GET", `${this.#path}/${encodeURIComponent(this.name)}`)) as Secret;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  #secret(data: CaSecretData): Secret {
    const encoded: Record<string, string> = {};
    for (const key of CA_SECRET_KEYS) encoded[key] = Buffer.from(data[key], "utf8").toString("base64");
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: this.name, namespace: this.namespace },
      type: CA_SECRET_TYPE,
      data: encoded,
    };
  }
}
