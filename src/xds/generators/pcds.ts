// PCDS: the mesh's trust bundle as a ProxyConfig (Istio's pilot/pkg/xds/pcds.go). Istio sends it only
// with ISTIO_MULTIROOT_MESH (off by default), on a proxy's request or a forced push, and only the
// `ca_certificates_pem` field; without the feature the type is registered and answers nothing, so a
// request neither errors nor reaches the `api` generator.
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import type { PushRequest } from "../../model/index.ts";
import type { Generator } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { isProxyRequest } from "./needs-push.ts";

export interface PcdsOptions {
  /** ISTIO_MULTIROOT_MESH. */
  multiRootMesh: boolean;
  /** The trust bundle's root certificates (PEM), or undefined without a CA (Istio's nil TrustBundle). */
  trustBundle: () => readonly string[] | undefined;
}

/** ProxyConfig field 34, `repeated string ca_certificates_pem`, encoded by hand: no other field is sent. */
export function encodeCaCertificatesPem(pems: readonly string[]): Uint8Array {
  const parts: number[] = [];
  for (const pem of pems) {
    const bytes = new TextEncoder().encode(pem);
    parts.push(...varint((34 << 3) | 2), ...varint(bytes.length), ...bytes);
  }
  return Uint8Array.from(parts);
}

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

export function pcdsGenerator(options: PcdsOptions): Generator {
  return {
    generate(_proxy, _watched, req) {
      // Istio's pcdsNeedsPush: only with the feature, and then only for requests and forced pushes.
      if (!options.multiRootMesh || !(req.forced || isProxyRequest(req))) return undefined;
      const bundle = options.trustBundle();
      if (!bundle) return undefined;
      const resource = create(AnySchema, { typeUrl: TypeUrl.ProxyConfig, value: encodeCaCertificatesPem(bundle) });
      return { resources: [{ name: "", resource }] };
    },
  };
}
