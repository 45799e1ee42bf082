// VirtualService documents for the file source's tests, and how the tests read them back.
import type { ConfigObject } from "../../src/config/index.ts";

/** A valid VirtualService document named `name` (namespace prod) routing `host`. */
export function vs(name: string, host = name): string {
  return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ${name}
  namespace: prod
spec:
  hosts: [${host}]
  http:
  - route:
    - destination:
        host: ${host}
`;
}

/** VirtualServices as "name=host" (their first host), sorted. */
export function nameHosts(objects: readonly ConfigObject[]): string[] {
  return objects.map((o) => `${o.metadata.name}=${(o.spec as { hosts: string[] } | undefined)?.hosts[0]}`).sort();
}
