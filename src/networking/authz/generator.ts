// What a condition generator returns: Envoy matchers, or why a value cannot be expressed on this
// filter chain (an HTTP-only attribute on TCP, a malformed IP or port). Istio drops the whole rule
// of an ALLOW policy on such a value but only the value (or attribute) of a DENY or AUDIT policy.
import type { rbac } from "../../api/index.ts";

export class NotGenerated {
  constructor(readonly reason: string) {}
}

export interface GenerateContext {
  forTcp: boolean;
  /** Match peer identities in the `authenticated` principal form (else the peer filter state). */
  useAuthenticated: boolean;
}

/** Turns one value of an attribute into one matcher. */
export interface PerValue<T> {
  each(key: string, value: string, ctx: GenerateContext): T | NotGenerated;
}

/** Turns all values of an attribute into one matcher. */
export interface AllValues<T> {
  all(key: string, values: readonly string[], ctx: GenerateContext): T | NotGenerated;
}

export type Generator<T> = PerValue<T> | AllValues<T>;

export type PrincipalGenerator = Generator<rbac.Principal>;
export type PermissionGenerator = Generator<rbac.Permission>;

export function httpOnly(key: string): NotGenerated {
  return new NotGenerated(`${JSON.stringify(key)} is HTTP only`);
}
