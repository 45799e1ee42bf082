// `sluice create-remote-secret --name <cluster>`: prints the Secret that lets a control plane in another
// cluster read this one (istioctl's create-remote-secret, bearer-token auth). In the cluster of
// --kubeconfig/--context it makes sure of the reader ServiceAccount and its ClusterRole (those
// `sluice install` renders: the registry's Kubernetes kinds, list and watch), finds or creates a
// token Secret of that ServiceAccount (`<sa>-istio-remote-secret-token`, filled by the cluster's token
// controller), and prints a Secret `istio-remote-secret-<name>` labelled istio/multiCluster=true whose
// key <name> holds a kubeconfig of the API server, the cluster's CA and that token. Apply it in the
// other cluster's control-plane namespace.

import { stringify } from "yaml";
import type { CommandModule } from "yargs";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";

interface CreateRemoteSecretArgs {
  name?: string;
  serviceAccount: string;
  createServiceAccount: boolean;
  server?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  istioNamespace: string;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** How long the token controller gets to fill a new token Secret (istioctl: 5 tries, a second apart). */
const TOKEN_WAIT_TRIES = 5;

export const createRemoteSecretCommand: CommandModule<object, CreateRemoteSecretArgs> = {
  command: "create-remote-secret",
  describe: "Create a secret with credentials to allow the control plane to read this cluster's endpoints",
  builder: (yargs) =>
    yargs
      .option("name", {
        type: "string",
        describe: "Cluster ID of this cluster: the secret's key (default: the kube-system namespace's UID)",
      })
      .option("serviceAccount", {
        alias: "service-account",
        type: "string",
        default: "istio-reader-service-account",
        describe: "The ServiceAccount whose token the secret carries",
      })
      .option("createServiceAccount", {
        alias: "create-service-account",
        type: "boolean",
        default: true,
        describe: "Create the ServiceAccount and its reader ClusterRole when the ServiceAccount is missing",
      })
      .option("server", { type: "string", describe: "The API server's address, instead of the kubeconfig's" })
      .check((argv) => {
        if (argv.name !== undefined && !DNS1123_LABEL.test(argv.name))
          throw new Error(`${argv.name} is not a valid DNS 1123 label`);
        return true;
      })
      .example(
        "$0 create-remote-secret --kubeconfig west.yaml --name west | kubectl --kubeconfig east.yaml apply -f -",
        "Let the control plane of cluster east read cluster west",
      )
      .epilogue(
        `Exit status: ${EXIT_OK} printed, ${EXIT_INVALID} the cluster refused or the token did not come, ${EXIT_USAGE} usage error.`,
      ) as never,
  handler: async (argv) => {
    const [{ kubeconfigAvailable }, { KubeAccess, loadCliKubeConfig }] = await Promise.all([
      import("./kubeconfig.ts"),
      import("./kube-access.ts"),
    ]);
    if (!kubeconfigAvailable(argv.kubeconfig)) {
      process.stderr.write("Error: no kubeconfig to reach a cluster: name one with --kubeconfig\n");
      process.exitCode = EXIT_USAGE;
      return;
    }
    const kubeConfig = loadCliKubeConfig(argv.kubeconfig, argv.context);
    const { client } = new KubeAccess(kubeConfig);
    try {
      const server = argv.server ?? kubeConfig.getCurrentCluster()?.server ?? "";
      if (!argv.server && /127\.0\.0\.1|localhost/.test(server)) {
        process.stderr.write(
          `warn: server in Kubeconfig is ${server}. This is likely not reachable from inside the cluster, if you're using Kubernetes in Docker, pass --server with the container IP for the API Server\n`,
        );
      }
      const secret = await createRemoteSecret(client, {
        name: argv.name,
        namespace: argv.namespace || argv.istioNamespace,
        serviceAccount: argv.serviceAccount,
        createServiceAccount: argv.createServiceAccount,
        server,
      });
      process.stdout.write(remoteSecretText(secret));
      process.exitCode = EXIT_OK;
    } catch (err) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      process.exitCode = EXIT_INVALID;
    }
  },
};

/** The client calls create-remote-secret makes (KubeClient's). */
interface Requests {
  request(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown>;
  patch(path: string, patch: unknown, contentType: string): Promise<unknown>;
}

interface RemoteSecretOptions {
  name: string | undefined;
  namespace: string;
  serviceAccount: string;
  createServiceAccount: boolean;
  server: string;
}

interface SecretObject {
  apiVersion: "v1";
  kind: "Secret";
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  stringData: Record<string, string>;
}

interface TokenSecret {
  metadata: { name: string; annotations?: Record<string, string> };
  type?: string;
  data?: { "ca.crt"?: string; token?: string };
}

const TOKEN_TYPE = "kubernetes.io/service-account-token";
/** YAML as Kubernetes' Go serializer writes it: long lines unfolded, list items not indented under their key. */
const YAML_AS_GO = { lineWidth: 0, indentSeq: false };
const SA_NAME_ANNOTATION = "kubernetes.io/service-account.name";

async function createRemoteSecret(client: Requests, options: RemoteSecretOptions): Promise<SecretObject> {
  const { namespace, serviceAccount } = options;
  const name = options.name ?? (await clusterUid(client));
  await ensureServiceAccount(client, options);
  const token = await tokenData(client, namespace, serviceAccount);
  const kubeconfig = {
    apiVersion: "v1",
    clusters: [{ cluster: { "certificate-authority-data": token.ca, server: options.server }, name }],
    contexts: [{ context: { cluster: name, user: name }, name }],
    "current-context": name,
    kind: "Config",
    users: [{ name, user: { token: token.token } }],
  };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      annotations: { "networking.istio.io/cluster": name },
      labels: { "istio/multiCluster": "true" },
      name: `istio-remote-secret-${name}`,
      namespace,
    },
    stringData: { [name]: stringify(kubeconfig, YAML_AS_GO) },
  };
}

/** istioctl's text: a header, the Secret's YAML, and a document end. */
export function remoteSecretText(secret: SecretObject): string {
  return `# This file is autogenerated, do not edit.\n${stringify(secret, YAML_AS_GO)}---\n`;
}

/** The kube-system namespace's UID, istioctl's default cluster name. */
async function clusterUid(client: Requests): Promise<string> {
  const ns = (await client.request("GET", "/api/v1/namespaces/kube-system")) as { metadata: { uid: string } };
  return ns.metadata.uid;
}

/** The ServiceAccount, else (with createServiceAccount) it and its reader ClusterRole as `sluice install` renders them. */
async function ensureServiceAccount(client: Requests, options: RemoteSecretOptions): Promise<void> {
  const { namespace, serviceAccount } = options;
  const path = `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}`;
  const found = await client.request("GET", path).then(
    () => true,
    (err: { code?: number }) => {
      if (err.code === 404) return false;
      throw err;
    },
  );
  if (found) return;
  if (!options.createServiceAccount)
    throw new Error(
      `failed retrieving service account ${serviceAccount}.${namespace} required for creating the remote secret (hint: run with '--create-service-account=true')`,
    );
  const install = await import("../install/index.ts");
  const values = new install.Values(install.loadValues([], [`global.istioNamespace=${namespace}`]));
  const reader = install
    .renderRemoteReader(values)
    .map((object) =>
      object.kind === "ServiceAccount" ? { ...object, metadata: { ...object.metadata, name: serviceAccount } } : object,
    )
    .map((object) =>
      object.kind === "ClusterRoleBinding" || object.kind === "RoleBinding"
        ? { ...object, subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }] }
        : object,
    );
  await client.request("GET", `/api/v1/namespaces/${namespace}`).catch(async (err: { code?: number }) => {
    if (err.code !== 404) throw err;
    await client.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace },
    });
  });
  await install.applyObjects(client as Parameters<typeof install.applyObjects>[0], reader);
}

/**
 * The CA and token of a token Secret of the ServiceAccount: one that exists, else a new one
 * `<sa>-istio-remote-secret-token`, waited for while the token controller fills it.
 */
async function tokenData(
  client: Requests,
  namespace: string,
  serviceAccount: string,
): Promise<{ ca: string; token: string }> {
  const list = (await client.request("GET", `/api/v1/namespaces/${namespace}/secrets`)) as { items: TokenSecret[] };
  let secret = list.items.find(
    (s) => s.type === TOKEN_TYPE && s.metadata.annotations?.[SA_NAME_ANNOTATION] === serviceAccount,
  );
  if (!secret) {
    secret = (await client.request("POST", `/api/v1/namespaces/${namespace}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `${serviceAccount}-istio-remote-secret-token`,
        annotations: { [SA_NAME_ANNOTATION]: serviceAccount },
      },
      type: TOKEN_TYPE,
    })) as TokenSecret;
  }
  for (let tries = 0; ; tries++) {
    const { "ca.crt": ca, token } = secret.data ?? {};
    if (ca !== undefined && token !== undefined) {
      // ca.crt is kept base64 as the kubeconfig's certificate-authority-data; the token is text.
      return { ca, token: Buffer.from(token, "base64").toString("utf8") };
    }
    if (tries === TOKEN_WAIT_TRIES)
      throw new Error(
        `could not get access token to read resources from local kube-apiserver: no "token" data found in ${secret.metadata.name}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    secret = (await client.request(
      "GET",
      `/api/v1/namespaces/${namespace}/secrets/${secret.metadata.name}`,
    )) as TokenSecret;
  }
}
