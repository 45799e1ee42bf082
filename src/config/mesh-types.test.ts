// The mesh field tables generated from Istio's mesh protos (mesh-types.gen.ts) as the decoder reads them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ENUM_VALUES, MESSAGE_FIELDS, ONEOF_GROUPS } from "./mesh-types.ts";

test("mesh field tables: messages, well-known types, wrappers, maps, lists and networking messages", () => {
  assert.equal(MESSAGE_FIELDS.MeshConfig.defaultConfig, "msg:ProxyConfig");
  assert.equal(MESSAGE_FIELDS.MeshConfig.outboundTrafficPolicy, "msg:MeshConfig.OutboundTrafficPolicy");
  assert.equal(MESSAGE_FIELDS.MeshConfig.extensionProviders, "msg:MeshConfig.ExtensionProvider[]");
  assert.equal(MESSAGE_FIELDS.MeshConfig.meshMTLS, "msg:MeshConfig.TLSConfig", "JSON name of mesh_mTLS");
  assert.equal(MESSAGE_FIELDS.ProxyConfig.drainDuration, "duration");
  assert.equal(MESSAGE_FIELDS.ProxyConfig.concurrency, "int32", "google.protobuf.Int32Value");
  assert.equal(MESSAGE_FIELDS.MeshConfig.enableAutoMtls, "bool", "google.protobuf.BoolValue");
  assert.equal(MESSAGE_FIELDS["MeshConfig.ExtensionProvider.StackdriverProvider"].maxNumberOfAttributes, "int64");
  assert.equal(MESSAGE_FIELDS["MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider.LogFormat"].labels, "struct");
  assert.equal(MESSAGE_FIELDS.ProxyConfig.proxyMetadata, "map:string");
  assert.equal(MESSAGE_FIELDS.Tracing.customTags, "map:msg:Tracing.CustomTag");
  assert.equal(MESSAGE_FIELDS.ConfigSource.subscribedResources, "enum:Resource[]");
  assert.equal(MESSAGE_FIELDS.SDS.k8sSaJwtPath, "string");
  assert.equal(MESSAGE_FIELDS.MeshNetworks.networks, "map:msg:Network");
  // Messages of other packages stay opaque: their own validators check them.
  assert.equal(MESSAGE_FIELDS.MeshConfig.localityLbSetting, "object");
  assert.equal(MESSAGE_FIELDS.ProxyConfig.readinessProbe, "object");
  // Ahead of the pinned protos, kept by hand in mesh-types.ts.
  assert.equal(MESSAGE_FIELDS.MeshConfig.defaultInboundHttpRetryPolicy, "object");
});

test("mesh enum values and oneofs", () => {
  assert.deepEqual(ENUM_VALUES["MeshConfig.OutboundTrafficPolicy.Mode"], {
    REGISTRY_ONLY: 0,
    ALLOW_ANY: 1,
    ALLOW_ANY_DYNAMIC_DNS: 3,
  });
  assert.equal(ENUM_VALUES.AuthenticationPolicy.INHERIT, 1000);
  assert.deepEqual(ONEOF_GROUPS.ProxyConfig, [["serviceCluster", "tracingServiceName"]]);
  assert.deepEqual(ONEOF_GROUPS["Network.NetworkEndpoints"], [["fromCidr", "fromRegistry"]]);
});

test("every kind in the mesh field tables is one the decoder reads, and every message and enum it names is there", () => {
  const scalars = new Set(["string", "bool", "int32", "uint32", "int64", "double", "duration", "struct", "object"]);
  for (const [message, fields] of Object.entries(MESSAGE_FIELDS)) {
    for (const [field, kind] of Object.entries(fields)) {
      const element = kind.replace(/\[\]$/, "").replace(/^map:/, "");
      const where = `${message}.${field}: ${kind}`;
      if (element.startsWith("msg:")) assert.ok(element.slice(4) in MESSAGE_FIELDS, where);
      else if (element.startsWith("enum:")) assert.ok(element.slice(5) in ENUM_VALUES, where);
      else assert.ok(scalars.has(element), where);
    }
  }
  for (const [message, groups] of Object.entries(ONEOF_GROUPS)) {
    for (const field of groups.flat()) assert.ok(field in MESSAGE_FIELDS[message], `${message}.${field}`);
  }
});
