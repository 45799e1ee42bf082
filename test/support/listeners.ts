// Test support shared by the listener tests: proxies and mesh configs from golden inputs, and the
// check every generated listener must pass.
import assert from "node:assert/strict";
import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { stringify } from "yaml";
import { core, listener } from "../../src/api/index.ts";
import { loadMeshConfig, type MeshConfig } from "../../src/config/index.ts";
import type { AuthorizationPolicySpec } from "../../src/config/types/index.ts";
import { type ProxyNode, parseProxy } from "../../src/model/proxy.ts";
import type { PoliciesByAction } from "../../src/networking/authz/index.ts";
import { envoyViolations } from "../../src/networking/httpfilter/index.ts";
import type { Service } from "../../src/registry/index.ts";
import { protoJson } from "./golden.ts";
import { testService } from "./registry-inputs.ts";

export interface ProxyInput {
  type?: string;
  ip?: string;
  /** Node metadata (LABELS, INTERCEPTION_MODE, IDLE_TIMEOUT, ...). */
  metadata?: JsonObject;
}

export function proxyFrom(input: ProxyInput = {}): ProxyNode {
  const type = input.type ?? "sidecar";
  const ip = input.ip ?? "10.1.0.5";
  const node = create(core.NodeSchema, {
    id: `${type}~${ip}~app-7d9.default~default.svc.cluster.local`,
    metadata: { NAMESPACE: "default", ...input.metadata },
  });
  const parsed = parseProxy(node);
  if (!parsed.proxy) throw new Error(parsed.error);
  return parsed.proxy;
}

export function meshFrom(overrides: JsonObject = {}): MeshConfig {
  return loadMeshConfig(stringify(overrides)).mesh;
}

/** Every listener passes Envoy's constraints, and as JSON for a golden file. */
export function checkedListenersJson(listeners: readonly listener.Listener[]): JsonValue[] {
  for (const l of listeners) assert.deepEqual(envoyViolations(listener.ListenerSchema, l), [], l.name);
  return listeners.map((l) => protoJson(listener.ListenerSchema, l));
}

/** A service with every field at its default; tests set what matters. */
export function service(fields: Partial<Service> & Pick<Service, "hostname" | "ports">): Service {
  const name = fields.hostname.split(".")[0];
  return testService({ namespace: "default", name, objectName: name, selector: {}, ...fields });
}

/** AuthorizationPolicies of the `default` namespace grouped by action, as the model selects them for a workload. */
export function policiesByAction(
  policies: readonly { name: string; spec: AuthorizationPolicySpec }[],
): PoliciesByAction {
  const authz: PoliciesByAction = { custom: [], deny: [], allow: [], audit: [] };
  for (const p of policies) {
    const action = (p.spec.action ?? "ALLOW").toLowerCase() as keyof PoliciesByAction;
    authz[action].push({ name: p.name, namespace: "default", annotations: {}, spec: p.spec });
  }
  return authz;
}
