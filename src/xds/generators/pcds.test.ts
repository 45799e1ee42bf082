import assert from "node:assert/strict";
import { test } from "node:test";
import { create, createFileRegistry, type DescMessage, fromBinary } from "@bufbuild/protobuf";
import { type Any, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { core } from "../../api/index.ts";
import { parseProxy } from "../../model/proxy.ts";
import { newPushContext, pushRequest } from "../../model/push-context.ts";
import { TypeUrl } from "../types.ts";
import { isProxyRequest } from "./needs-push.ts";
import { encodeCaCertificatesPem, pcdsGenerator } from "./pcds.ts";

/** istio.mesh.v1alpha1.ProxyConfig reduced to the one field PCDS sends, to read the bytes back. */
const ProxyConfigSchema = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "istio/mesh/v1alpha1/proxy.proto",
    package: "istio.mesh.v1alpha1",
    syntax: "proto3",
    messageType: [
      {
        name: "ProxyConfig",
        field: [{ name: "ca_certificates_pem", jsonName: "caCertificatesPem", number: 34, type: 9, label: 3 }],
      },
    ],
  }),
  () => undefined,
).getMessage("istio.mesh.v1alpha1.ProxyConfig") as DescMessage;

const proxy = (() => {
  const parsed = parseProxy(create(core.NodeSchema, { id: "sidecar~10.0.0.1~app.ns~ns.svc.cluster.local" }));
  if (parsed.error !== undefined) throw new Error(parsed.error);
  return parsed.proxy;
})();
const watched = { typeUrl: TypeUrl.ProxyConfig, resourceNames: new Set<string>(), wildcard: true };
const push = newPushContext({});
const request = pushRequest({ full: true, push, reasons: ["proxyrequest"] });
const configPush = pushRequest({ full: true, push, reasons: ["config"] });
const forced = pushRequest({ full: true, push, reasons: ["debug"], forced: true });
const roots = ["-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n", "x".repeat(300)];

test("a proxy request is a push for that request alone", () => {
  assert.equal(isProxyRequest(request), true);
  assert.equal(isProxyRequest(configPush), false);
  assert.equal(isProxyRequest(pushRequest({ full: true, push, reasons: ["proxyrequest", "config"] })), false);
});

test("ca_certificates_pem is field 34 of ProxyConfig, as protobuf reads it", () => {
  const decoded = fromBinary(ProxyConfigSchema, encodeCaCertificatesPem(roots)) as unknown as {
    caCertificatesPem: string[];
  };
  assert.deepEqual(decoded.caCertificatesPem, roots);
  assert.deepEqual([...encodeCaCertificatesPem(["ab"])], [0x92, 0x02, 0x02, 0x61, 0x62]);
});

test("without ISTIO_MULTIROOT_MESH PCDS answers nothing, as istiod's default", () => {
  const gen = pcdsGenerator({ multiRootMesh: false, trustBundle: () => roots });
  for (const req of [request, configPush, forced]) assert.equal(gen.generate(proxy, watched, req), undefined);
});

test("with ISTIO_MULTIROOT_MESH the trust bundle goes on requests and forced pushes only, and never without a CA", () => {
  const gen = pcdsGenerator({ multiRootMesh: true, trustBundle: () => roots });
  for (const req of [request, forced]) {
    const [only, ...rest] = gen.generate(proxy, watched, req)?.resources ?? [];
    assert.deepEqual(rest, []);
    const any = only?.resource as Any;
    assert.equal(any.typeUrl, TypeUrl.ProxyConfig);
    assert.deepEqual(
      (fromBinary(ProxyConfigSchema, any.value) as unknown as { caCertificatesPem: string[] }).caCertificatesPem,
      roots,
    );
  }
  assert.equal(gen.generate(proxy, watched, configPush), undefined);
  assert.equal(
    pcdsGenerator({ multiRootMesh: true, trustBundle: () => undefined }).generate(proxy, watched, request),
    undefined,
  );
});
