import assert from "node:assert/strict";

// Who wrote an object, as the API server records it in managedFields: one [manager, operation,
// subresource] per entry ("" for the main resource), in the order of their text (the server keeps
// its own order), without times.
export type Writer = [manager: string, operation: string, subresource: string];

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
}

export function writers(object: unknown): Writer[] {
  const entries = (object as { metadata?: { managedFields?: ManagedFieldsEntry[] } } | undefined)?.metadata
    ?.managedFields;
  return (entries ?? [])
    .map((f): Writer => [f.manager ?? "", f.operation ?? "", f.subresource ?? ""])
    .sort((a, b) => a.join(" ").localeCompare(b.join(" ")));
}

/**
 * Asserts that istiod's and Sluice's copies of an object record their status writes alike (manager,
 * operation and fields), and that istiod's is one update of the status subresource under its user
 * agent's command, pilot-discovery (as Istio's image runs it).
 */
export function assertSameStatusWrites(istiod: unknown, sluice: unknown): void {
  const statusWrites = (object: unknown) =>
    (
      (object as { metadata?: { managedFields?: (ManagedFieldsEntry & { fieldsV1?: unknown })[] } }).metadata
        ?.managedFields ?? []
    )
      .filter((f) => f.subresource === "status")
      .map((f) => [f.manager, f.operation, f.fieldsV1]);
  const written = statusWrites(istiod);
  assert.deepEqual(
    written.map(([manager, operation]) => [manager, operation]),
    [["pilot-discovery", "Update"]],
  );
  assert.deepEqual(statusWrites(sluice), written);
}
