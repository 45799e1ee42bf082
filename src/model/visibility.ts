// exportTo: which namespaces see a Service, VirtualService or DestinationRule (Istio's
// pkg/config/visibility). `*` is every namespace, `.` the object's own, `~` none; other
// values name namespaces. An empty list means the mesh default for the kind.

export const EXPORT_PUBLIC = "*";
export const EXPORT_PRIVATE = ".";
export const EXPORT_NONE = "~";

/**
 * The effective exportTo of an object in `namespace`: `exportTo` as written or else `defaults`,
 * with `.` replaced by the namespace itself.
 */
export function exportToSet(
  exportTo: readonly string[] | undefined,
  defaults: readonly string[] | undefined,
  namespace: string,
): ReadonlySet<string> {
  const written = exportTo && exportTo.length > 0 ? exportTo : defaults && defaults.length > 0 ? defaults : ["*"];
  return new Set(written.map((e) => (e === EXPORT_PRIVATE ? namespace : e)));
}

/** An object with this effective exportTo is visible to config in `client` namespace. */
export function isExportedTo(exportTo: ReadonlySet<string>, client: string): boolean {
  return exportTo.has(EXPORT_PUBLIC) || exportTo.has(client);
}
