import assert from "node:assert/strict";
import { test } from "node:test";
import { goSprintf, renderMessage, sortedDeduped } from "./message.ts";
import { MESSAGES } from "./messages.ts";
import { newResource } from "./resource.ts";

test("Go verbs: %s, %v of a list, %q, %d, %%", () => {
  assert.equal(goSprintf("%s %v %q %d 100%%", ["a", ["x", "y"], 'say "hi"', 7]), 'a [x y] "say \\"hi\\"" 7 100%');
  assert.equal(goSprintf("%s %s", ["one"]), "one %!s(MISSING)");
});

test("messages sort by level, code, resource, then text, and identical ones are dropped", () => {
  const vs = newResource({
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "b", namespace: "ns" },
  });
  const svc = newResource({ apiVersion: "v1", kind: "Service", metadata: { name: "a" } }, { file: "s.json", line: 3 });
  const warning = { type: MESSAGES.Deprecated, args: ["x"], resource: vs };
  const error = { type: MESSAGES.ReferencedResourceNotFound, args: ["host", "h"], resource: vs };
  const info = { type: MESSAGES.PortNameIsNotUnderNamingConvention, args: ["foo", 80, "0"], resource: svc };
  const sorted = sortedDeduped([info, warning, error, warning]).map(renderMessage);
  assert.deepEqual(sorted, [
    'Error [IST0101] (VirtualService ns/b) Referenced host not found: "h"',
    "Warning [IST0002] (VirtualService ns/b) Deprecated: x",
    // .json references carry no line, as istioctl prints them.
    "Info [IST0118] (Service a s.json) Port name foo (port: 80, targetPort: 0) doesn't follow the naming convention of Istio port.",
  ]);
});
