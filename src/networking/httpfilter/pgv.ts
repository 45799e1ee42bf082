// The Envoy constraint check as the listener and filter tests apply it: every violation counts,
// except "unknown type" for the TypedStruct-only config types (their protos are not generated).
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { checkMessage, type Violation } from "../../api/pgv/index.ts";
import { TYPED_STRUCT_ONLY_TYPE_URLS } from "./extension-types.ts";

export function envoyViolations<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Violation[] {
  return checkMessage(schema, message).filter(
    (v) =>
      !(v.rule === "any.known_type" && [...TYPED_STRUCT_ONLY_TYPE_URLS].some((url) => v.message.includes(`"${url}"`))),
  );
}
