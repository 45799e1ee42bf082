// What the controllers need of a Kubernetes client (sources/kube's KubeClient is one): JSON requests
// that throw an error carrying the HTTP status as `code` on a non-2xx answer.

export interface KubeRequests {
  request(method: "GET" | "PUT" | "POST", path: string, body?: unknown): Promise<unknown>;
}

/** Whether `err` is the API server's answer with HTTP status `code`. */
export const isStatus = (err: unknown, code: number): boolean => (err as { code?: unknown } | undefined)?.code === code;

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The manager of istiod's writes in managedFields: it names none, so the API server takes its user
 * agent's command, pilot-discovery in Istio's image.
 */
export const ISTIOD_MANAGER = "pilot-discovery";

/** The manager of istiod's status updates: the same. */
export const ISTIOD_STATUS_MANAGER = ISTIOD_MANAGER;
