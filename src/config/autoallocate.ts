// Which ServiceEntries Istio's IP autoallocation gives addresses (pilot/pkg/networking/serviceentry
// ShouldV2AutoAllocateIP with PILOT_ENABLE_IP_AUTOALLOCATE on): the controller writes them into the
// entry's status, the registry reads them from there, and validation warns of TCP ports only when
// an entry gets none.

/** The label by which an entry opts out (value "false", any case). */
export const AUTOALLOCATE_LABEL = "networking.istio.io/enable-autoallocate-ip";

/** Whether the entry gets auto-allocated addresses: resolution not NONE, no spec addresses, not opted out. */
export function autoAllocatesAddresses(
  labels: Readonly<Record<string, string>> | undefined,
  spec: { readonly resolution?: string; readonly addresses?: readonly unknown[] } | undefined,
): boolean {
  if (!spec || (spec.resolution ?? "NONE") === "NONE") return false;
  if ((labels?.[AUTOALLOCATE_LABEL] ?? "").toLowerCase() === "false") return false;
  return (spec.addresses ?? []).length === 0;
}
