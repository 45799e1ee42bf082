// VirtualService `directResponse` → Envoy DirectResponseAction: the status and an inline body.
import { create } from "@bufbuild/protobuf";
import { core, route } from "../../api/index.ts";
import type { VirtualServiceHttpDirectResponse } from "../../config/index.ts";

export function translateDirectResponse(direct: VirtualServiceHttpDirectResponse): route.DirectResponseAction {
  const out = create(route.DirectResponseActionSchema, { status: direct.status });
  const body = direct.body;
  if (body?.string !== undefined) {
    out.body = create(core.DataSourceSchema, { specifier: { case: "inlineString", value: body.string } });
  } else if (body?.bytes !== undefined) {
    // `bytes` is base64 in YAML/JSON, as protobuf JSON writes bytes.
    out.body = create(core.DataSourceSchema, {
      specifier: { case: "inlineBytes", value: new Uint8Array(Buffer.from(body.bytes, "base64")) },
    });
  }
  return out;
}
