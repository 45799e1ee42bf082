import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inboundChainOptions, protocolClass } from "./index.ts";

describe("protocol classes and inbound match sets (networking.go, filterchain_options.go)", () => {
  it("HTTP, HTTP2, GRPC, GRPC-Web and HTTP_PROXY are HTTP; TCP, HTTPS, TLS, Mongo, Redis, MySQL are TCP; undeclared is sniffed", () => {
    for (const p of ["HTTP", "HTTP2", "GRPC", "GRPC-Web", "HTTP_PROXY"] as const)
      assert.equal(protocolClass(p), "http", p);
    for (const p of ["TCP", "HTTPS", "TLS", "Mongo", "Redis", "MySQL"] as const)
      assert.equal(protocolClass(p), "tcp", p);
    assert.equal(protocolClass("UnsupportedProtocol"), "auto");
    assert.equal(protocolClass("UDP"), "udp");
  });

  it("chain counts per protocol and mode follow Istio's table", () => {
    const counts = (["auto", "http", "tcp"] as const).map((cls) =>
      (["PERMISSIVE", "STRICT", "DISABLE"] as const).map((mode) => inboundChainOptions(cls, mode).length),
    );
    assert.deepEqual(counts, [
      [5, 2, 2],
      [2, 1, 1],
      [3, 1, 1],
    ]);
  });

  it("STRICT never matches plaintext; DISABLE never terminates mTLS", () => {
    for (const cls of ["auto", "http", "tcp"] as const) {
      assert.ok(inboundChainOptions(cls, "STRICT").every((o) => o.transportProtocol === "tls" && o.mtls));
      assert.ok(inboundChainOptions(cls, "DISABLE").every((o) => o.transportProtocol === "raw_buffer" && !o.mtls));
    }
  });
});
