// The Envoy constraint check for generated resources, as the builders' tests apply it: every PGV
// violation counts, except "unknown type" for config types Sluice sends as TypedStruct only.
import assert from "node:assert/strict";
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { registry } from "../../src/api/index.ts";
import { checkMessage, type Violation } from "../../src/api/pgv/index.ts";
import { TYPED_STRUCT_ONLY_TYPE_URLS } from "../../src/networking/httpfilter/index.ts";

const UNCHECKABLE = [...TYPED_STRUCT_ONLY_TYPE_URLS];

/** Violations of one message. */
export function violations(schema: DescMessage, message: Message): Violation[] {
  return checkMessage(schema, message).filter(
    (v) => !(v.rule === "any.known_type" && UNCHECKABLE.some((url) => v.message.includes(`"${url}"`))),
  );
}

/** Violations of an xDS resource as sent (an Any). */
export function anyViolations(any: Any): Violation[] {
  const schema = registry.getMessage(any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1));
  if (!schema) return [{ path: "", rule: "any.known_type", message: `unknown resource type ${any.typeUrl}` }];
  return violations(schema, fromBinary(schema, any.value));
}

/** Asserts every resource of an xDS response is within Envoy's constraints. */
export function assertValidResources(res: { resources: readonly Any[] }): void {
  for (const any of res.resources) assert.deepEqual(anyViolations(any), [], any.typeUrl);
}
