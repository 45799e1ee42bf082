import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  encodeMessage,
  packAny,
  registry,
  schemaForTypeUrl,
  security,
  TypeUrl,
  typeUrl,
  unpackAny,
  workloadapi,
  zdsapi,
} from "./index.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

// A pod in an ambient namespace, as ztunnel receives it over WDS.
const address = create(workloadapi.AddressSchema, {
  type: {
    case: "workload",
    value: {
      uid: "Kubernetes//Pod/ns/app-7d4f",
      name: "app-7d4f",
      namespace: "ns",
      addresses: [new Uint8Array([10, 0, 0, 7])],
      network: "net1",
      tunnelProtocol: workloadapi.TunnelProtocol.HBONE,
      trustDomain: "cluster.local",
      serviceAccount: "app",
      node: "node-1",
      workloadType: workloadapi.WorkloadType.POD,
      workloadName: "app",
      services: { "ns/app.ns.svc.cluster.local": { ports: [{ servicePort: 80, targetPort: 8080 }] } },
      authorizationPolicies: ["ns/allow-frontend"],
      locality: { region: "r", zone: "z" },
      capacity: 2,
    },
  },
});

// An L4 ALLOW rule: from namespace "frontend" to port 8080.
const authorization = create(security.AuthorizationSchema, {
  name: "allow-frontend",
  namespace: "ns",
  scope: security.Scope.WORKLOAD_SELECTOR,
  action: security.Action.ALLOW,
  groups: [
    {
      rules: [
        {
          matches: [
            {
              namespaces: [{ matchType: { case: "exact", value: "frontend" } }],
              sourceIps: [{ address: new Uint8Array([10, 1, 0, 0]), length: 16 }],
              destinationPorts: [8080],
            },
          ],
        },
      ],
    },
  ],
});

describe("WDS protos (istio.workload, istio.security)", () => {
  it("names Address and Authorization by the type URLs istiod serves them under", () => {
    assert.equal(TypeUrl.Address, "type.googleapis.com/istio.workload.Address");
    assert.equal(TypeUrl.WorkloadAuthorization, "type.googleapis.com/istio.security.Authorization");
    assert.equal(typeUrl(workloadapi.AddressSchema), TypeUrl.Address);
    assert.equal(typeUrl(security.AuthorizationSchema), TypeUrl.WorkloadAuthorization);
    assert.equal(schemaForTypeUrl(TypeUrl.Address), workloadapi.AddressSchema);
    assert.equal(schemaForTypeUrl(TypeUrl.Workload), workloadapi.WorkloadSchema);
    assert.equal(schemaForTypeUrl(TypeUrl.WorkloadAuthorization), security.AuthorizationSchema);
    assert.equal(registry.getMessage("istio.workload.zds.WorkloadRequest"), zdsapi.WorkloadRequestSchema);
  });

  it("round-trips an Address holding a Workload through both encoders", () => {
    const bytes = toBinary(workloadapi.AddressSchema, address);
    assert.equal(hex(encodeMessage(workloadapi.AddressSchema, address)), hex(bytes));
    const decoded = fromBinary(workloadapi.AddressSchema, bytes);
    assert.ok(equals(workloadapi.AddressSchema, decoded, address));
    assert.equal(decoded.type.case, "workload");
    const workload = decoded.type.value!;
    assert.equal(workload.uid, "Kubernetes//Pod/ns/app-7d4f");
    assert.deepEqual([...workload.addresses[0]!], [10, 0, 0, 7]);
    assert.equal(workload.tunnelProtocol, workloadapi.TunnelProtocol.HBONE);
    assert.equal(workload.workloadType, workloadapi.WorkloadType.POD);
    assert.equal(workload.services["ns/app.ns.svc.cluster.local"]?.ports[0]?.targetPort, 8080);
    assert.equal(workload.capacity, 2);
  });

  it("round-trips an Authorization through both encoders", () => {
    const bytes = toBinary(security.AuthorizationSchema, authorization);
    assert.equal(hex(encodeMessage(security.AuthorizationSchema, authorization)), hex(bytes));
    const decoded = fromBinary(security.AuthorizationSchema, bytes);
    assert.ok(equals(security.AuthorizationSchema, decoded, authorization));
    const match = decoded.groups[0]?.rules[0]?.matches[0];
    assert.deepEqual(match?.namespaces[0]?.matchType, { case: "exact", value: "frontend" });
    assert.deepEqual(match?.destinationPorts, [8080]);
  });

  it("packs both into Anys with their type URLs and unpacks them through the registry", () => {
    const anyAddress = packAny(workloadapi.AddressSchema, address);
    const anyAuthorization = packAny(security.AuthorizationSchema, authorization);
    assert.equal(anyAddress.typeUrl, TypeUrl.Address);
    assert.equal(anyAuthorization.typeUrl, TypeUrl.WorkloadAuthorization);
    const unpackedAddress = unpackAny(anyAddress, workloadapi.AddressSchema);
    const unpackedAuthorization = unpackAny(anyAuthorization);
    assert.ok(unpackedAddress && equals(workloadapi.AddressSchema, unpackedAddress, address));
    assert.equal(unpackedAuthorization?.$typeName, "istio.security.Authorization");
  });

  it("encodes with Istio's field numbers (Workload.uid=20, Authorization.scope=3)", () => {
    const small = create(workloadapi.AddressSchema, { type: { case: "workload", value: { uid: "u" } } });
    // workload (1) { uid (20, a two-byte tag) "u" }
    assert.equal(hex(toBinary(workloadapi.AddressSchema, small)), "0a04" + "a20101" + "75");
    const service = create(workloadapi.AddressSchema, { type: { case: "service", value: { hostname: "h" } } });
    // service (2) { hostname (3) "h" }
    assert.equal(hex(toBinary(workloadapi.AddressSchema, service)), "1203" + "1a0168");
    const scoped = create(security.AuthorizationSchema, {
      scope: security.Scope.NAMESPACE,
      action: security.Action.DENY,
    });
    // scope (3) NAMESPACE=1 | action (4) DENY=1
    assert.equal(hex(toBinary(security.AuthorizationSchema, scoped)), "1801" + "2001");
  });
});

describe("ZDS protos (istio.workload.zds)", () => {
  it("round-trips a WorkloadRequest carrying an add", () => {
    const request = create(zdsapi.WorkloadRequestSchema, {
      payload: {
        case: "add",
        value: {
          uid: "0b5c3e1a-pod-uid",
          workloadInfo: { name: "app-7d4f", namespace: "ns", serviceAccount: "app" },
        },
      },
    });
    const bytes = toBinary(zdsapi.WorkloadRequestSchema, request);
    assert.equal(hex(encodeMessage(zdsapi.WorkloadRequestSchema, request)), hex(bytes));
    const decoded = fromBinary(zdsapi.WorkloadRequestSchema, bytes);
    assert.ok(equals(zdsapi.WorkloadRequestSchema, decoded, request));
    assert.equal(decoded.payload.case, "add");
    assert.equal(decoded.payload.value?.workloadInfo?.serviceAccount, "app");
  });

  it("encodes the other payloads and the reply with Istio's field numbers", () => {
    const encode = (payload: zdsapi.WorkloadRequest["payload"]) =>
      hex(toBinary(zdsapi.WorkloadRequestSchema, create(zdsapi.WorkloadRequestSchema, { payload })));
    // del (2) { uid (2) "u" }: DelWorkload's uid is field 2
    assert.equal(encode({ case: "del", value: create(zdsapi.DelWorkloadSchema, { uid: "u" }) }), "1203" + "120175");
    // keep (5) { uid (1) "u" }
    assert.equal(encode({ case: "keep", value: create(zdsapi.KeepWorkloadSchema, { uid: "u" }) }), "2a03" + "0a0175");
    // snapshot_sent (3) {}
    assert.equal(encode({ case: "snapshotSent", value: create(zdsapi.SnapshotSentSchema) }), "1a00");
    const hello = create(zdsapi.ZdsHelloSchema, { version: zdsapi.Version.V1 });
    assert.equal(hex(toBinary(zdsapi.ZdsHelloSchema, hello)), "0801");
    const response = create(zdsapi.WorkloadResponseSchema, { payload: { case: "ack", value: { error: "e" } } });
    const decoded = fromBinary(zdsapi.WorkloadResponseSchema, toBinary(zdsapi.WorkloadResponseSchema, response));
    assert.deepEqual(decoded.payload.case === "ack" && decoded.payload.value.error, "e");
  });
});
