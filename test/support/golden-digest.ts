// The golden tests' fingerprint of generated resources: SHA-256 over their encoded Anys in order,
// each first checked against Envoy's constraints, so an optimisation that changes a byte fails.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { fromBinary, type Message } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { encodeResource } from "../../src/xds/index.ts";
import { anyViolations } from "./pgv.ts";

/** SHA-256 (hex) over the resources' encoded Anys, after checking each one's Envoy constraints. */
export function goldenDigest(resources: readonly Message[], what: string): string {
  assert.ok(resources.length > 0, `${what}: no resources`);
  const hash = createHash("sha256");
  for (const resource of resources) {
    const { any } = encodeResource({ name: "", resource });
    const named = resource as { name?: string; clusterName?: string };
    const name = named.name ?? named.clusterName ?? "";
    assert.deepEqual(anyViolations(fromBinary(AnySchema, any)), [], `${what} ${name}`);
    hash.update(any);
  }
  return hash.digest("hex");
}
