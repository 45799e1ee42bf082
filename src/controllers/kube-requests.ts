// What the controllers need of a Kubernetes client (sources/kube's KubeClient is one): JSON requests
// that throw an error carrying the HTTP status as `code` on a non-2xx answer. Writes name no field
// manager but for server-side applies: the API server records them under the client's user agent's
// command, pilot-discovery for sluiced's KubeClient, as it records istiod's.

export interface KubeRequests {
  request(method: "GET" | "PUT" | "POST", path: string, body?: unknown): Promise<unknown>;
}

/** Whether `err` is the API server's answer with HTTP status `code`. */
export const isStatus = (err: unknown, code: number): boolean => (err as { code?: unknown } | undefined)?.code === code;

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
