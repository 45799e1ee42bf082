import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type DescMessage, equals, type MessageShape } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { core, hcm, listener, tcpProxy } from "../../api/index.ts";
import {
  cidrRangeMessage,
  networkFilterMessage,
  newFilterChain,
  newFilterChainMatch,
  newHttpConnectionManager,
  newListener,
  newTcpProxy,
  socketAddressMessage,
} from "./message.ts";

function assertSame<Desc extends DescMessage>(made: MessageShape<Desc>, expected: MessageShape<Desc>): void {
  assert.deepStrictEqual(made, expected);
  assert.deepEqual(Object.keys(made), Object.keys(expected));
}

describe("listener messages written as plain objects", () => {
  it("have exactly the shape, values and key order create() gives", () => {
    assertSame(newListener("l"), create(listener.ListenerSchema, { name: "l" }));
    // A FilterChain's unset message fields are present as undefined (one hidden class for every chain).
    const chain = newFilterChain([]);
    const created = create(listener.FilterChainSchema);
    assert.ok(equals(listener.FilterChainSchema, chain, created));
    const extra = Object.keys(chain).filter((k) => !Object.hasOwn(created, k));
    assert.deepEqual(Object.keys(chain).slice(0, -extra.length), Object.keys(created));
    for (const k of extra) {
      assert.equal(chain[k as keyof typeof chain], undefined, k);
      assert.equal(
        listener.FilterChainSchema.field[k as keyof typeof listener.FilterChainSchema.field]?.fieldKind,
        "message",
      );
    }
    assertSame(newFilterChainMatch(), create(listener.FilterChainMatchSchema));
    assertSame(newTcpProxy("s"), create(tcpProxy.TcpProxySchema, { statPrefix: "s" }));
    assertSame(newHttpConnectionManager(), create(hcm.HttpConnectionManagerSchema));
    assertSame(
      cidrRangeMessage("10.0.0.0", 8),
      create(core.CidrRangeSchema, { addressPrefix: "10.0.0.0", prefixLen: 8 }),
    );
    const address = create(core.AddressSchema, {
      address: {
        case: "socketAddress",
        value: create(core.SocketAddressSchema, {
          address: "1.2.3.4",
          portSpecifier: { case: "portValue", value: 80 },
        }),
      },
    });
    assertSame(socketAddressMessage("1.2.3.4", 80), address);
    const config = create(AnySchema, { typeUrl: "t" });
    assertSame(
      networkFilterMessage("f", config),
      create(listener.FilterSchema, { name: "f", configType: { case: "typedConfig", value: config } }),
    );
  });

  it("each have their own lists and oneofs", () => {
    const l = newListener("a");
    l.filterChains.push(newFilterChain([]));
    l.listenerSpecifier = { case: "internalListener", value: create(listener.Listener_InternalListenerConfigSchema) };
    assert.equal(newListener("b").filterChains.length, 0);
    assert.equal(newListener("b").listenerSpecifier.case, undefined);
  });
});
