// The inference extension's InferencePool CRD (inference.networking.k8s.io), which is not among the CRDs
// the test cluster installs: read at run time from the Go module cache, where the istiod peer's build put
// the module (never copied into this repository).
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const MODULE = "gateway-api-inference-extension@";
const CRD = "config/crd/bases/inference.networking.k8s.io_inferencepools.yaml";

/** The CRD file of the newest cached version of the module, or undefined when no version is cached. */
export function inferencePoolCrdFile(): string | undefined {
  const cache = process.env.GOMODCACHE || join(process.env.GOPATH || join(homedir(), "go"), "pkg", "mod");
  const dir = join(cache, "sigs.k8s.io");
  if (!existsSync(dir)) return undefined;
  const versions = readdirSync(dir)
    .filter((name) => name.startsWith(MODULE))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const file = versions.length > 0 ? join(dir, versions[versions.length - 1], CRD) : undefined;
  return file && existsSync(file) ? file : undefined;
}
