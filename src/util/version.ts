// The version /version, pilot_info and `sluice version` report: the package's, read once from
// package.json, and the git commit it was built from, which `npm run build` records in
// dist/build-info.json ("unknown" when running from source or built outside a git checkout).
import { readFileSync } from "node:fs";

export const SLUICE_VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export const SLUICE_REVISION: string = readRevision();

function readRevision(): string {
  try {
    const info = JSON.parse(readFileSync(new URL("../build-info.json", import.meta.url), "utf8")) as {
      commit?: string;
    };
    return info.commit ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Istio's version.Info.String(), what istiod serves on /version and labels pilot_info with:
 * `<version>-<git revision>-<build status>`. Sluice's builds record no status, which Istio's
 * unstamped builds give as "unknown".
 */
export function buildInfoString(version = SLUICE_VERSION, revision = SLUICE_REVISION): string {
  return `${version}-${revision}-unknown`;
}
