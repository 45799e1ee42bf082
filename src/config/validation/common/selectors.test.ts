import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import { validateLabelsSelector, validateMatchLabelsSelector, validatePolicyTargets } from "./selectors.ts";

test("matchLabels selector: empty keys and wildcards are errors", () => {
  const r = collect((out) => validateMatchLabelsSelector({ matchLabels: { "": "v", "a*": "b", c: "*" } }, out));
  assert.deepEqual(r.errors, [
    { path: "spec.matchLabels", message: 'empty key is not supported in selector: "=v"' },
    { path: "spec.matchLabels", message: 'wildcard is not supported in selector: "a*=b"' },
    { path: "spec.matchLabels", message: 'wildcard is not supported in selector: "c=*"' },
  ]);
});

test("matchLabels selector without labels warns", () => {
  assert.deepEqual(messages(collect((out) => validateMatchLabelsSelector({}, out)).warnings), [
    "workload selector specified without labels",
  ]);
  assert.deepEqual(collect((out) => validateMatchLabelsSelector(undefined, out)).warnings, []);
});

test("labels selector reports errors and emptiness for the kind to word", () => {
  const out = collect((f) => {
    assert.deepEqual(validateLabelsSelector({ labels: { a: "*" } }, f), { ok: false, empty: false });
    assert.deepEqual(validateLabelsSelector({}, f), { ok: true, empty: true });
    assert.deepEqual(validateLabelsSelector(undefined, f), { ok: true, empty: false });
  });
  assert.deepEqual(messages(out.errors), ['wildcard is not supported in selector: "a=*"']);
  assert.deepEqual(out.warnings, []);
});

test("policy targets: only one of selector, targetRef, targetRefs", () => {
  const r = collect((out) =>
    validatePolicyTargets({ selector: { matchLabels: { a: "b" } }, targetRef: { kind: "Service", name: "s" } }, out),
  );
  assert.deepEqual(messages(r.errors), ["only one of targetRefs or workloadSelector can be set"]);
});

test("policy targets: name, namespace and kind of each targetRef", () => {
  const r = collect((out) =>
    validatePolicyTargets(
      {
        targetRefs: [
          { group: "", kind: "Service", name: "ok" },
          { group: "gateway.networking.k8s.io", kind: "Gateway", name: "" },
          { group: "apps", kind: "Deployment", name: "d", namespace: "other" },
        ],
      },
      out,
    ),
  );
  assert.deepEqual(r.errors, [
    { path: "spec.targetRefs[1]", message: "targetRef name must be set" },
    {
      path: "spec.targetRefs[2]",
      message: "targetRef namespace must not be set; cross namespace referencing is not supported",
    },
    {
      path: "spec.targetRefs[2]",
      message:
        "targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was apps/Deployment",
    },
  ]);
});
