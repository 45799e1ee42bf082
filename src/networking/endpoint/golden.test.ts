// Golden tests per feature: testdata/<feature>.in.yaml (cases: service, endpoints, subset, policy,
// proxy) → testdata/<feature>.out.yaml (the ClusterLoadAssignment as proto3 JSON). UPDATE_GOLDEN=1
// rewrites the expected files. Every assignment must pass Envoy's constraint checker.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import {
  makeEndpoint,
  makeMesh,
  makeProxy,
  makeService,
  type ProxyInput,
  type ServiceInput,
} from "../../../test/support/cluster-fixtures.ts";
import { assertGolden, protoJson, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { endpoint } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleTrafficPolicy } from "../../config/types/index.ts";
import type { NetworkGateways } from "../../model/network-gateways.ts";
import type { ServiceEndpoint } from "../../registry/index.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { outboundClusterName } from "../cluster/index.ts";
import { buildClusterLoadAssignment } from "./index.ts";

interface GoldenCase {
  name: string;
  proxy?: ProxyInput;
  mesh?: Partial<MeshConfig>;
  service?: ServiceInput;
  endpoints?: Partial<ServiceEndpoint>[];
  subset?: string;
  subsetLabels?: Record<string, string>;
  policy?: DestinationRuleTrafficPolicy;
  /** Workloads (by name) whose PeerAuthentication disables mTLS. */
  peerAuthenticationDisabled?: string[];
  networkGateways?: NetworkGateways;
  includeUnhealthy?: boolean;
  includeDraining?: boolean;
  mtlsCapableOnly?: boolean;
  clusterLocal?: boolean;
}

function buildCase(c: GoldenCase): endpoint.ClusterLoadAssignment {
  const service = makeService(c.service ?? {});
  const port = service.ports[0];
  const disabled = new Set(c.peerAuthenticationDisabled ?? []);
  return buildClusterLoadAssignment({
    clusterName: outboundClusterName(NO_MEMOS, port.port, c.subset ?? "", service.hostname),
    port: port.port,
    endpoints: (c.endpoints ?? []).map((e) => makeEndpoint(service, e)),
    subsetLabels: c.subsetLabels,
    proxy: makeProxy(c.proxy),
    mesh: makeMesh(c.mesh),
    policy: c.policy,
    peerAuthenticationDisabled: (ep) => disabled.has(ep.workloadName),
    networkGateways: c.networkGateways,
    includeUnhealthy: c.includeUnhealthy,
    includeDraining: c.includeDraining,
    mtlsCapableOnly: c.mtlsCapableOnly,
    clusterLocal: c.clusterLocal,
  });
}

const FEATURES = ["cla", "locality", "network"];
const TESTDATA = testdataDir(import.meta.url);

for (const feature of FEATURES) {
  describe(`endpoint golden: ${feature}`, () => {
    const cases = readGoldenInput(TESTDATA, feature) as GoldenCase[];
    const built = cases.map((c) => ({ name: c.name, cla: buildCase(c) }));

    it("matches testdata", () => {
      const out: Record<string, JsonValue> = {};
      for (const { name, cla } of built) out[name] = protoJson(endpoint.ClusterLoadAssignmentSchema, cla);
      assertGolden(TESTDATA, feature, out);
    });

    for (const { name, cla } of built) {
      it(`${name}: passes Envoy's constraints`, () => {
        assert.deepEqual(checkMessage(endpoint.ClusterLoadAssignmentSchema, cla), []);
      });
    }
  });
}
