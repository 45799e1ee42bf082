import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { assertGolden, protoJson, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { meshFrom } from "../../../test/support/listeners.ts";
import { tls } from "../../api/index.ts";
import type { ServerTlsSettings } from "../../config/types/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { credentialSdsSecret, gatewayTlsContext, inboundMtlsContext } from "./index.ts";

const testdata = testdataDir(import.meta.url);

interface GoldenInput {
  mesh?: JsonObject;
  gateway: Record<string, ServerTlsSettings>;
}

describe("downstream TLS contexts (BuildListenerTLSContext, BuildInboundTLS)", () => {
  it("golden: tls-contexts", () => {
    const input = readGoldenInput(testdata, "tls-contexts") as GoldenInput;
    const mesh = meshFrom(input.mesh);
    const out: Record<string, unknown> = {};
    const contexts: [string, tls.DownstreamTlsContext][] = [
      ["inbound-http", inboundMtlsContext("http", mesh, ["cluster.local", "old.local"])],
      ["inbound-tcp", inboundMtlsContext("tcp", mesh, ["cluster.local"])],
      ...Object.entries(input.gateway).map(
        ([name, settings]) =>
          [`gateway-${name}`, gatewayTlsContext(settings, mesh)] as [string, tls.DownstreamTlsContext],
      ),
    ];
    for (const [name, context] of contexts) {
      assert.deepEqual(envoyViolations(tls.DownstreamTlsContextSchema, context), [], name);
      out[name] = protoJson(tls.DownstreamTlsContextSchema, context);
    }
    assertGolden(testdata, "tls-contexts", out as JsonObject);
  });

  it("credentialName forms: bare names become kubernetes://, explicit schemes are kept, builtin:// is the workload cert", () => {
    assert.equal(credentialSdsSecret("my-cert").name, "kubernetes://my-cert");
    assert.equal(credentialSdsSecret("kubernetes://ns/my-cert").name, "kubernetes://ns/my-cert");
    assert.equal(credentialSdsSecret("kubernetes-gateway://ns/gw-cert").name, "kubernetes-gateway://ns/gw-cert");
    assert.equal(credentialSdsSecret("configmap://ns/ca").name, "configmap://ns/ca");
    assert.equal(credentialSdsSecret("sds://external-cert").name, "kubernetes://external-cert");
    const builtin = credentialSdsSecret("builtin://");
    assert.equal(builtin.name, "default");
    assert.equal(builtin.sdsConfig?.configSourceSpecifier.case, "apiConfigSource");
  });

  it("meshMTLS minProtocolVersion TLSV1_3 raises the inbound minimum; cipher suites from meshMTLS replace Istio's", () => {
    const mesh = meshFrom({
      meshMTLS: { minProtocolVersion: "TLSV1_3", cipherSuites: ["ECDHE-RSA-AES256-GCM-SHA384"] },
    });
    const params = inboundMtlsContext("http", mesh, ["cluster.local"]).commonTlsContext?.tlsParams;
    assert.equal(params?.tlsMinimumProtocolVersion, tls.TlsParameters_TlsProtocol.TLSv1_3);
    assert.deepEqual(params?.cipherSuites, ["ECDHE-RSA-AES256-GCM-SHA384"]);
  });

  it("ISTIO_MUTUAL for a TCP server also offers istio-peer-exchange", () => {
    const context = gatewayTlsContext({ mode: "ISTIO_MUTUAL" }, meshFrom(), true);
    assert.deepEqual(context.commonTlsContext?.alpnProtocols, ["istio-peer-exchange", "h2", "http/1.1"]);
  });

  it("SIMPLE takes mesh tlsDefaults, then the server's own versions on top", () => {
    const mesh = meshFrom({ tlsDefaults: { minProtocolVersion: "TLSV1_3", ecdhCurves: ["P-256"] } });
    const params = gatewayTlsContext({ mode: "SIMPLE", credentialName: "c", minProtocolVersion: "TLSV1_2" }, mesh)
      .commonTlsContext?.tlsParams;
    assert.equal(params?.tlsMinimumProtocolVersion, tls.TlsParameters_TlsProtocol.TLSv1_2);
    assert.deepEqual(params?.ecdhCurves, ["P-256"]);
  });
});
