// A message kept as its encoded google.protobuf.Any alone. A cache whose values are handed out many
// times but whose fields nothing reads again (a workload's listeners, kept while its pods connect)
// keeps this instead of the message tree: a 12 kB listener is ~30 kB of objects as built. The xDS
// server sends the bytes as they are (xds/encode.ts); whoever needs the fields decodes them (unpacked).
import { type DescMessage, fromBinary, type MessageShape } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { encodeAny } from "./binary-encoder.ts";

/** An Any (type URL and value) that also keeps its whole encoding, and the resource's xDS name. */
export class PackedMessage {
  readonly $typeName = "google.protobuf.Any";
  /** The message's encoding: a view into `any`, past its type URL field. */
  readonly value: Uint8Array;

  constructor(
    /** The resource's name, as xDS names it. */
    readonly name: string,
    readonly typeUrl: string,
    /** The encoded Any: its type URL, then its value (as encodeAny writes them). */
    readonly any: Uint8Array,
  ) {
    // Field 1 (type_url) is stepped over whole; field 2's bytes are a view into `any`, not a copy.
    const reader = new BinaryReader(any);
    reader.tag();
    reader.skip(WireType.LengthDelimited);
    reader.tag();
    this.value = reader.bytes();
  }
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
