import assert from "node:assert/strict";
import { test } from "node:test";
import { create, equals, toBinary } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { core, encodeAny, listener, PackedMessage, packed, TypeUrl, unpacked } from "./index.ts";

function listenerNamed(name: string, extra = 0): listener.Listener {
  return create(listener.ListenerSchema, {
    name,
    // Long enough for a two-byte value length, or a three-byte one.
    statPrefix: "s".repeat(extra),
    address: {
      address: {
        case: "socketAddress",
        value: { address: "0.0.0.0", portSpecifier: { case: "portValue", value: 15006 } },
      },
    },
  });
}

test("a packed message is an Any of its encoding, and decodes to the message", () => {
  for (const extra of [0, 200, 20_000]) {
    const built = listenerNamed("virtualInbound", extra);
    const p = packed(listener.ListenerSchema, TypeUrl.Listener, built.name, built);
    assert.ok(p instanceof PackedMessage);
    assert.equal(p.name, "virtualInbound");
    assert.deepEqual(p.any, encodeAny(listener.ListenerSchema, built, TypeUrl.Listener));
    // As an Any it encodes to the same bytes, its value the listener's own encoding.
    assert.deepEqual(toBinary(AnySchema, create(AnySchema, { typeUrl: p.typeUrl, value: p.value })), p.any);
    assert.deepEqual(p.value, toBinary(listener.ListenerSchema, built));
    assert.ok(equals(listener.ListenerSchema, unpacked(listener.ListenerSchema, p), built));
  }
});

test("a message that cannot be encoded stays as it is; unpacked passes a message through", () => {
  const bad = listenerNamed("bad");
  // A port beyond uint32 cannot be written.
  bad.address = create(core.AddressSchema, {
    address: {
      case: "socketAddress",
      value: { address: "0.0.0.0", portSpecifier: { case: "portValue", value: 2 ** 33 } },
    },
  });
  const p = packed(listener.ListenerSchema, TypeUrl.Listener, bad.name, bad);
  assert.equal(p, bad);
  assert.equal(unpacked(listener.ListenerSchema, bad), bad);
});
