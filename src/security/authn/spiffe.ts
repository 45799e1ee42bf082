// SPIFFE ids as Istio writes them for Kubernetes service accounts (pkg/spiffe).

export interface SpiffeId {
  trustDomain: string;
  namespace: string;
  serviceAccount: string;
}

/** `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`, or undefined. */
export function parseSpiffeId(uri: string): SpiffeId | undefined {
  const m = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(uri);
  return m ? { trustDomain: m[1], namespace: m[2], serviceAccount: m[3] } : undefined;
}
