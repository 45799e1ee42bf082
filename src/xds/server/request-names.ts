// A SotW request names every resource of its type the proxy wants, and most requests are ACKs naming
// what the one before did: an unscoped sidecar's EDS ACK lists 1,000 clusters (~47 KB), which
// protobuf-es decodes in ~400 µs, for every proxy after every push (0.8 s of one core for 2,000
// proxies). The proxies of a namespace, or of a whole unscoped mesh, watch the same clusters in the
// same order, so the names are decoded once per distinct run of bytes and that list is shared by every
// request carrying the same run; the rest of the request is decoded as usual.
import { fromBinary } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
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
 * the whole request is decoded), or when the bytes are not a message. Read with offsets only: a
 * BinaryReader's skip makes a subarray of every field it passes, 100 per scoped EDS ACK: 20 of the
 * 91 MB sluiced allocated over ten scoped SotW endpoint changes.
 */
function namesSpan(bytes: Uint8Array): { start: number; end: number } | undefined {
  const cursor = new WireCursor(bytes);
  let start = -1;
  let end = -1;
  while (!cursor.done) {
    const at = cursor.pos;
    const tag = cursor.varint32();
    if (tag < 0 || !cursor.skipValue(tag & 7)) return undefined;
    if (tag >>> 3 !== RESOURCE_NAMES_FIELD) continue;
    if ((tag & 7) !== WireType.LengthDelimited || (start >= 0 && at !== end)) return undefined;
    if (start < 0) start = at;
    end = cursor.pos;
  }
  return start < 0 ? undefined : { start, end };
}

/** Steps over a message's fields by offset alone. */
class WireCursor {
  pos = 0;

  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** The varint here if it fits 32 bits unsigned, else -1 (also when the bytes end inside it). */
  varint32(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.done) return -1;
      const byte = this.bytes[this.pos++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value <= 0xffffffff ? value : -1;
    }
    return -1;
  }

  /** Steps over a value of `wireType`; false when it overruns the bytes or is a group. */
  skipValue(wireType: number): boolean {
    switch (wireType) {
      case WireType.Varint:
        for (let n = 0; n < 10 && !this.done; n++) if (this.bytes[this.pos++] < 0x80) return true;
        return false;
      case WireType.Bit64:
        this.pos += 8;
        break;
      case WireType.Bit32:
        this.pos += 4;
        break;
      case WireType.LengthDelimited: {
        const length = this.varint32();
        if (length < 0) return false;
        this.pos += length;
        break;
      }
      default:
        // Groups (deprecated, in no xDS message) and invalid wire types: fromBinary decides.
        return false;
    }
    return this.pos <= this.bytes.length;
  }
}
