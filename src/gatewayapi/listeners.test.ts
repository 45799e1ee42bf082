import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Listener, listenerConflicts, supportedKinds } from "./listeners.ts";

const http = (name: string, hostname?: string, port = 80): Listener => ({ name, port, protocol: "HTTP", hostname });

describe("supportedKinds", () => {
  test("HTTP listeners take HTTPRoute and GRPCRoute; TLS Terminate also takes TCPRoute", () => {
    assert.deepEqual(
      supportedKinds(http("a")).kinds.map((k) => k.kind),
      ["HTTPRoute", "GRPCRoute"],
    );
    const terminate: Listener = { name: "t", port: 443, protocol: "TLS", tls: { mode: "Terminate" } };
    assert.deepEqual(
      supportedKinds(terminate).kinds.map((k) => k.kind),
      ["TLSRoute", "TCPRoute"],
    );
  });

  test("asking for a kind the protocol cannot carry makes the listener's route kinds invalid", () => {
    const listener: Listener = {
      ...http("a"),
      allowedRoutes: { kinds: [{ kind: "HTTPRoute" }, { kind: "TCPRoute" }] },
    };
    const { kinds, valid } = supportedKinds(listener);
    assert.deepEqual(
      kinds.map((k) => k.kind),
      ["HTTPRoute"],
    );
    assert.equal(valid, false);
  });
});

describe("listenerConflicts", () => {
  test("a later listener with the same port and hostname has a HostnameConflict", () => {
    const conflicts = listenerConflicts([
      { ownerKind: "Gateway", ownerKey: "ns/gw", listeners: [http("first", "a.com"), http("second", "a.com")] },
    ]);
    assert.deepEqual([...(conflicts.get("Gateway/ns/gw") ?? [])], [["second", "HostnameConflict"]]);
  });

  test("TCP next to HTTP on one port is a ProtocolConflict; other ports never conflict", () => {
    const tcp: Listener = { name: "tcp", port: 80, protocol: "TCP" };
    const conflicts = listenerConflicts([
      { ownerKind: "Gateway", ownerKey: "ns/gw", listeners: [http("web"), http("other", "b.com", 8080)] },
      { ownerKind: "ListenerSet", ownerKey: "ns/set", listeners: [tcp] },
    ]);
    assert.equal(conflicts.get("Gateway/ns/gw"), undefined);
    assert.deepEqual([...(conflicts.get("ListenerSet/ns/set") ?? [])], [["tcp", "ProtocolConflict"]]);
  });
});
