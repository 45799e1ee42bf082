// A SotW request names every resource of its type the proxy wants, and most requests are ACKs naming
// what the one before did: an unscoped sidecar's EDS ACK lists 1,000 clusters (~47 KB), which
// protobuf-es decodes in ~400 µs, for every proxy after every push (0.8 s of one core for 2,000
// proxies). The proxies of a namespace, or of a whole unscoped mesh, watch the same clusters in the
// same order, so the names are decoded once per distinct run of bytes and that list is shared by every
// request carrying the same run; the rest of the request is decoded as usual.
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { discovery } from "../../api/index.ts";

/** DiscoveryRequest.resource_names. */
const RESOURCE_NAMES_FIELD = 3;
/** Shorter runs of names decode faster than they are looked up. */
const MIN_SHARED_BYTES = 2048;
/** Distinct runs kept (a namespace's sidecars share one); the oldest goes first. */
const KEPT_RUNS = 32;

interface SharedRun {
  bytes: Buffer;
  names: readonly string[];
}

/** Decodes DiscoveryRequests, sharing the decoded resource names of requests that name the same ones. */
export class DiscoveryRequestDecoder {
  readonly #runs: SharedRun[] = [];

  decode(bytes: Buffer): discovery.DiscoveryRequest {
    const span = namesSpan(bytes);
    if (!span || span.end - span.start < MIN_SHARED_BYTES) return fromBinary(discovery.DiscoveryRequestSchema, bytes);
    const run = bytes.subarray(span.start, span.end);
    const shared = this.#runs.find((r) => r.bytes.length === run.length && r.bytes.equals(run));
    if (!shared) {
      const req = fromBinary(discovery.DiscoveryRequestSchema, bytes);
      if (this.#runs.length === KEPT_RUNS) this.#runs.shift();
      // Frozen: every request that names these shares the list.
      this.#runs.push({ bytes: Buffer.from(run), names: Object.freeze(req.resourceNames) });
      return req;
    }
    const rest = Buffer.concat([bytes.subarray(0, span.start), bytes.subarray(span.end)]);
    const req = fromBinary(discovery.DiscoveryRequestSchema, rest);
    req.resourceNames = shared.names as string[];
    return req;
  }
}

/**
 * Where the request's resource_names fields lie: one contiguous run of them, as every encoder
 * writes a repeated field. Undefined when there are none, when they are split by other fields (then
 * the whole request is decoded), or when the bytes are not a message. Fields are stepped over by
 * moving the reader, not with its skip(), which makes a subarray of every field it passes (100 per
 * scoped EDS ACK: 20 of the 91 MB sluiced allocated over ten scoped SotW endpoint changes).
 */
function namesSpan(bytes: Uint8Array): { start: number; end: number } | undefined {
  const reader = new BinaryReader(bytes);
  let start = -1;
  let end = -1;
  try {
    while (reader.pos < reader.len) {
      const at = reader.pos;
      const tag = reader.uint32();
      const wireType = tag & 7;
      if (wireType === WireType.Varint) reader.uint32();
      else if (wireType === WireType.Bit64) reader.pos += 8;
      else if (wireType === WireType.Bit32) reader.pos += 4;
      else if (wireType === WireType.LengthDelimited) {
        // Read first: `pos += uint32()` would add the length to the position before the length's bytes.
        const length = reader.uint32();
        reader.pos += length;
      }
      // Groups (in no xDS message) and invalid wire types: fromBinary decides.
      else return undefined;
      if (reader.pos > reader.len) return undefined;
      if (tag >>> 3 !== RESOURCE_NAMES_FIELD) continue;
      if (wireType !== WireType.LengthDelimited || (start >= 0 && at !== end)) return undefined;
      if (start < 0) start = at;
      end = reader.pos;
    }
  } catch {
    // Not a message: fromBinary says why.
    return undefined;
  }
  return start < 0 ? undefined : { start, end };
}
