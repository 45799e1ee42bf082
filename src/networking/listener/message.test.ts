import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { assertCreateShape } from "../../../test/support/message-shape.ts";
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
    assertCreateShape(listener.FilterChainSchema, newFilterChain([]), create(listener.FilterChainSchema));
    assertCreateShape(listener.FilterChainMatchSchema, newFilterChainMatch(), create(listener.FilterChainMatchSchema));
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
