// A message kept as its encoded google.protobuf.Any alone. A cache whose values are handed out many
// times but whose fields nothing reads again (a workload's listeners, kept while its pods connect)
// keeps this instead of the message tree: a 12 kB listener is ~30 kB of objects as built. The xDS
// server sends the bytes as they are (xds/encode.ts); whoever needs the fields decodes them (unpacked).
import { type DescMessage, fromBinary, type MessageShape } from "@bufbuild/protobuf";
import { encodeAny } from "./binary-encoder.ts";

/** An Any (type URL and value) that also keeps its whole encoding, and the resource's xDS name. */
export class PackedMessage {
  readonly $typeName = "google.protobuf.Any";
  readonly typeUrl: string;
  /** The message's encoding: a view into `any`. */
  readonly value: Uint8Array;

  constructor(
    /** The resource's name, as xDS names it. */
    readonly name: string,
    typeUrl: string,
    /** The encoded Any. */
    readonly any: Uint8Array,
  ) {
    this.typeUrl = typeUrl;
    this.value = any.subarray(valueOffset(any));
  }
}

/** Where an encoded Any's value starts: past its type URL field and the value field's tag and length. */
function valueOffset(any: Uint8Array): number {
  let pos = 0;
  for (let field = 0; field < 2; field++) {
    pos++; // the tag: fields 1 and 2 of an Any are one byte each
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = any[pos++];
      length += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    if (field === 0) pos += length;
  }
  return pos;
}

/**
 * `message` packed under `name`, or the message itself when it cannot be encoded (a value out of its
 * field's range): the xDS server then reports the error as it does for any resource.
 */
export function packed<Desc extends DescMessage>(
  schema: Desc,
  typeUrl: string,
  name: string,
  message: MessageShape<Desc>,
): PackedMessage | MessageShape<Desc> {
  try {
    return new PackedMessage(name, typeUrl, encodeAny(schema, message, typeUrl));
  } catch {
    return message;
  }
}

/** The message of a packed one (decoded anew on each call), or the message itself. */
export function unpacked<Desc extends DescMessage>(
  schema: Desc,
  message: PackedMessage | MessageShape<Desc>,
): MessageShape<Desc> {
  return message instanceof PackedMessage ? fromBinary(schema, message.value) : message;
}
