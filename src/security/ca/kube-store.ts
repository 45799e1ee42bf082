// The CA's root in the Kubernetes Secret `istio-ca-secret` (Istio's choice). Apart from store.ts so that
// sluiced loads the Kubernetes client only when it has a cluster.
import { ApiException, CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { CA_SECRET_KEYS, CA_SECRET_NAME, type CaSecretData, type CaSecretStore } from "./store.ts";

/** Istio's Secret type for it. */
const CA_SECRET_TYPE = "istio.io/ca-root";

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
