/** A kubeconfig whose API server refuses every connection (port 1 of the loopback), with a bearer token. */
export const UNREACHABLE_KUBECONFIG = [
  "apiVersion: v1",
  "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
  "contexts: [{name: c, context: {cluster: c, user: c}}]",
  "current-context: c",
  "users: [{name: c, user: {token: abc}}]",
].join("\n");
