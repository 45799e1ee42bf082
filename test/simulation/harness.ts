// Config from YAML written in a test, translated for one proxy as `sluice x translate` does.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProxySpec, translate } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG, type MeshConfig } from "../../src/config/index.ts";
import { fromConfigDump, type ProxyConfig } from "./simulate.ts";

export const SIDECAR: ProxySpec = {
  type: "sidecar",
  ip: "10.0.0.7",
  namespace: "shop",
  labels: { app: "api" },
  id: "api.shop",
};
export const GATEWAY: ProxySpec = {
  type: "router",
  ip: "10.0.0.9",
  namespace: "istio-system",
  labels: { istio: "ingressgateway" },
  id: "ingress.istio-system",
};

/** The listeners, routes and clusters the control plane generates for `proxy` from `yaml`. */
export function generate(yaml: string, proxy: ProxySpec, mesh: MeshConfig = DEFAULT_MESH_CONFIG): ProxyConfig {
  const dir = mkdtempSync(join(tmpdir(), "sluice-sim-"));
  try {
    const file = join(dir, "config.yaml");
    writeFileSync(file, yaml);
    const result = translate([file], proxy, { mesh, domainSuffix: "cluster.local", types: ["CDS", "LDS", "RDS"] });
    assert.ok(result.dump, result.problems?.join("\n"));
    return fromConfigDump(result.dump);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
