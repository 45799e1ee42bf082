import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import { KINDS, lookupKind } from "../kinds.ts";
import type { ConfigObject } from "../model.ts";
import { Findings } from "../validation/findings.ts";
import { schemaFor, validateStructure } from "./index.ts";

function errorsOf(obj: ConfigObject): string[] {
  const info = lookupKind(obj.apiVersion, obj.kind);
  assert.ok(info, `unknown kind ${obj.apiVersion} ${obj.kind}`);
  const out = new Findings("");
  validateStructure(obj, info, out);
  return out.errors.map((issue) => `${issue.path}: ${issue.message}`);
}

const object = (apiVersion: string, kind: string, spec: unknown): ConfigObject => ({
  apiVersion,
  kind,
  metadata: { name: "x", namespace: "default" },
  spec,
});

describe("validateStructure", () => {
  it("has a schema for every version of every Istio and Gateway API kind", () => {
    for (const info of KINDS.filter((k) => k.hasSchema)) {
      for (const version of info.versions) {
        assert.ok(schemaFor(info, version)?.properties?.spec, `${info.kind} ${version}`);
      }
    }
  });

  it("ServiceEntry: CEL rejects a wildcard host and a duplicated port name", () => {
    const spec = {
      hosts: ["*"],
      ports: [
        { name: "http", number: 80 },
        { name: "http", number: 81 },
      ],
    };
    assert.deepEqual(errorsOf(object("networking.istio.io/v1", "ServiceEntry", spec)), [
      'spec.hosts[0]: Invalid value: "string": hostname cannot be wildcard',
      'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}',
    ]);
  });

  it("VirtualService: unknown fields, enums, oneOf and duration rules", () => {
    const spec = {
      hosts: ["a"],
      http: [
        {
          match: [{ uri: { exact: "/a", prefix: "/b" } }],
          route: [{ destination: { host: "b" } }],
          timeout: "0.1ms",
          bogus: 1,
        },
      ],
    };
    assert.deepEqual(errorsOf(object("networking.istio.io/v1beta1", "VirtualService", spec)), [
      'spec.http[0].match[0].uri: Invalid value: "": "spec.http[0].match[0].uri" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      'spec.http[0].timeout: Invalid value: "string": must be a valid duration greater than 1ms',
      'spec.http[0].bogus: unknown field "spec.http[0].bogus"',
    ]);
  });

  it("AuthorizationPolicy: only one of selector and targetRefs; enum values", () => {
    const spec = {
      selector: { matchLabels: { app: "a" } },
      targetRefs: [{ kind: "Service", name: "s" }],
      action: "MAYBE",
    };
    assert.deepEqual(errorsOf(object("security.istio.io/v1", "AuthorizationPolicy", spec)), [
      'spec.action: Unsupported value: "MAYBE": supported values: "ALLOW", "DENY", "AUDIT", "CUSTOM"',
      'spec: Invalid value: "object": only one of targetRefs or selector can be set',
    ]);
  });

  it("DestinationRule: host is required, status is ignored", () => {
    const obj = { ...object("networking.istio.io/v1", "DestinationRule", {}), status: { anything: true } };
    assert.deepEqual(errorsOf(obj), ["spec.host: Required value"]);
  });

  it("leaves Kubernetes built-in kinds to their own checks", () => {
    assert.deepEqual(errorsOf({ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { bogus: 1 } }), []);
  });

  it("Gateway API: accepts valid HTTPRoute and Gateway objects", () => {
    const route = {
      parentRefs: [{ name: "gw" }],
      hostnames: ["example.com"],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/api" } }],
          filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { add: [{ name: "x", value: "y" }] } }],
          backendRefs: [{ name: "svc", port: 8080, weight: 1 }],
        },
      ],
    };
    assert.deepEqual(errorsOf(object("gateway.networking.k8s.io/v1", "HTTPRoute", route)), []);
    const gateway = {
      gatewayClassName: "istio",
      listeners: [{ name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }],
    };
    assert.deepEqual(errorsOf(object("gateway.networking.k8s.io/v1", "Gateway", gateway)), []);
  });

  it("Gateway API: rejects bad HTTPRoute and Gateway objects, with defaults applied before CEL", () => {
    const route = {
      parentRefs: [{ name: "gw" }],
      // kind defaults to Service and group to "": a Service reference needs a port.
      rules: [{ matches: [{ path: { type: "PathPrefix", value: "no-slash" } }], backendRefs: [{ name: "svc" }] }],
    };
    assert.deepEqual(errorsOf(object("gateway.networking.k8s.io/v1", "HTTPRoute", route)), [
      "spec.rules[0].matches[0].path: Invalid value: \"object\": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
      'spec.rules[0].backendRefs[0]: Invalid value: "object": Must have port for Service reference',
    ]);
    const gateway = {
      gatewayClassName: "istio",
      listeners: [
        { name: "a", port: 80, protocol: "HTTP" },
        { name: "a", port: 70000, protocol: "HTTP" },
      ],
    };
    assert.deepEqual(errorsOf(object("gateway.networking.k8s.io/v1", "Gateway", gateway)), [
      "spec.listeners[1].port: Invalid value: 70000: spec.listeners[1].port in body should be less than or equal to 65535",
      'spec.listeners[1]: Duplicate value: map[string]interface {}{"name":"a"}',
      'spec.listeners: Invalid value: "array": Listener name must be unique within the Gateway',
    ]);
  });
});

/** Istio's CRD test corpus: each file split on `---` lines; `_err` is the expected error fragment. */
function corpus(suffix: string): { file: string; obj: ConfigObject; expected: string }[] {
  const dir = new URL("../../../../shared/conformance/istio/crd-validation/", import.meta.url);
  return readdirSync(dir)
    .filter((file) => file.endsWith(suffix))
    .flatMap((file) =>
      readFileSync(new URL(file, dir), "utf8")
        .split(/^---.*$/m)
        .filter((part) => part.trim() !== "")
        .map((part) => {
          const obj = parse(part) as ConfigObject;
          const expected = String(obj._err ?? "");
          delete obj._err;
          return { file, obj, expected };
        }),
    );
}

// The `yaml` package reads the flow item `001:db8::` as a map where Go's YAML reads a string: a decoder
// difference, not a schema one.
const YAML_DIFFERENCES = new Set(["serviceentry-valid.yaml/full"]);

describe("Istio CRD validation corpus", () => {
  it("accepts every valid document", () => {
    for (const { file, obj } of corpus("-valid.yaml")) {
      if (YAML_DIFFERENCES.has(`${file}/${obj.metadata.name}`)) continue;
      assert.deepEqual(errorsOf(obj), [], `${file} ${obj.metadata.name}`);
    }
  });

  it("rejects invalid documents with the expected error (the webhook rules reject the rest)", () => {
    const invalid = corpus("-invalid.yaml");
    let rejected = 0;
    for (const { file, obj, expected } of invalid) {
      const errors = errorsOf(obj);
      if (errors.length === 0) continue;
      rejected++;
      assert.ok(errors.join("; ").includes(expected), `${file} ${obj.metadata.name}: ${errors.join("; ")}`);
    }
    console.log(`structural validation rejects ${rejected} of ${invalid.length} invalid CRD documents`);
    assert.ok(rejected >= 75, `only ${rejected} of ${invalid.length} rejected`);
  });
});

describe("Gateway API conversion corpus", () => {
  it("accepts every Gateway API and Istio object of the conversion inputs", () => {
    const dir = new URL("../../../../shared/conformance/istio/gateway-api-conversion/", import.meta.url);
    let checked = 0;
    for (const file of readdirSync(dir).filter((name) => /^[a-z0-9-]+\.yaml$/.test(name))) {
      for (const doc of parseAllDocuments(readFileSync(new URL(file, dir), "utf8"))) {
        const obj = doc.toJS() as ConfigObject | null;
        const info = obj && lookupKind(obj.apiVersion, obj.kind);
        if (!obj || !info || info.family === "kubernetes") continue;
        // Istio's data writes sessionPersistence as Gateway API 1.6 does (sessionName, cookieConfig); the
        // XBackendTrafficPolicy CRD Sluice is generated from has the earlier shape (name, cookie).
        if (obj.kind === "XBackendTrafficPolicy") continue;
        assert.deepEqual(errorsOf(obj), [], `${file} ${obj.kind} ${obj.metadata.name}`);
        checked++;
      }
    }
    assert.ok(checked > 200, `only ${checked} objects checked`);
  });
});
