import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import {
  isHttpProtocol,
  isTcpBasedProtocol,
  isTlsProtocol,
  parseProtocol,
  portError,
  validatePortName,
  validateProtocol,
  validateSubsetName,
} from "./ports.ts";

test("ports must be in 1..65535", () => {
  assert.equal(portError(1), undefined);
  assert.equal(portError(65535), undefined);
  assert.equal(portError(0), "port number 0 must be in the range 1..65535");
  assert.equal(portError(65536), "port number 65536 must be in the range 1..65535");
});

test("port names are DNS-1123 labels; empty is invalid", () => {
  assert.deepEqual(collect((out) => validatePortName("http-web", out)).errors, []);
  assert.deepEqual(messages(collect((out) => validatePortName("", out)).errors), ["invalid port name: "]);
  assert.deepEqual(messages(collect((out) => validatePortName("a_b", out)).errors), ["invalid port name: a_b"]);
});

test("protocols are case-insensitive; empty means sniffing", () => {
  for (const ok of ["", "http", "GRPC-WEB", "Mongo", "http_proxy", "udp"]) {
    assert.deepEqual(collect((out) => validateProtocol(ok, out)).errors, [], ok);
  }
  assert.deepEqual(messages(collect((out) => validateProtocol("hbone", out)).errors), ["unsupported protocol: hbone"]);
  assert.equal(parseProtocol("grpc-web"), "GRPC-Web");
});

test("protocol families: HTTP, TLS and TCP-based", () => {
  assert.ok(isHttpProtocol("grpc") && isHttpProtocol("HTTP_PROXY") && !isHttpProtocol("https"));
  assert.ok(isTlsProtocol("https") && isTlsProtocol("TLS") && !isTlsProtocol("http"));
  assert.ok(isTcpBasedProtocol("mysql") && isTcpBasedProtocol("https") && !isTcpBasedProtocol("udp"));
  assert.ok(!isHttpProtocol("") && !isTcpBasedProtocol(""));
});

test("subset names: not empty, DNS-1123 label", () => {
  assert.deepEqual(messages(collect((out) => validateSubsetName("", out)).errors), ["subset name cannot be empty"]);
  assert.deepEqual(messages(collect((out) => validateSubsetName("v1.0", out)).errors), [
    "subset name is invalid: v1.0",
  ]);
  assert.deepEqual(collect((out) => validateSubsetName("v1", out)).errors, []);
});
