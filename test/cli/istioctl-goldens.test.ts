// istioctl's writer goldens (../shared/conformance/istio/istioctl), reproduced: the proxy-status
// table, verbose table, JSON and YAML from the inputs of Istio's status_test.go, and the
// proxy-config tables from the config dumps beside their outputs. Prints the pass count.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { csds, discovery, packAny } from "../../src/api/index.ts";
import { proxyConfigOutput } from "../../src/cli/proxy-config.ts";
import {
  bootstrapSummary,
  ecdsSummary,
  endpointSummary,
  fullSummary,
  parseConfigDump,
  routeSummary,
  secretSummary,
} from "../../src/cli/proxy-config-writer.ts";
import { writeStatus } from "../../src/cli/proxy-status-writer.ts";
import { TypeUrl } from "../../src/xds/types.ts";

const ROOT = join(import.meta.dirname, "../../../shared/conformance/istio/istioctl");
let passed = 0;
let total = 0;

function golden(name: string, got: () => string): void {
  total++;
  test(name, () => {
    // Exact, but for how many newlines end the file: the same writer call ends one golden with a
    // blank line and another without, so Istio's comparison cannot look at it either.
    assert.equal(got().trimEnd(), readFileSync(join(ROOT, name), "utf8").trimEnd());
    passed++;
  });
}

after(() => console.log(`istioctl writer goldens: ${passed}/${total} pass`));

type Status = keyof typeof csds.ConfigStatus;
interface ProxyInput {
  id: string;
  cluster: string;
  version: string;
  namespace?: string;
  cds: Status;
  lds: Status;
  rds: Status;
  eds: Status;
  ecds: Status;
}

// status_test.go's xdsResponseInput: Istio's JSON control plane identifier, one ClientConfig each.
function response(istiod: string, proxies: ProxyInput[]): discovery.DiscoveryResponse {
  const status = (s: Status) => csds.ConfigStatus[s] as csds.ConfigStatus;
  return create(discovery.DiscoveryResponseSchema, {
    versionInfo: "1.1",
    typeUrl: "type.googleapis.com/envoy.service.status.v3.ClientConfig",
    controlPlane: {
      identifier: JSON.stringify({
        Component: "istiod",
        ID: istiod,
        Info: { version: "1.1", revision: "", golang_version: "", status: "", tag: "" },
      }),
    },
    resources: proxies.map((p) =>
      packAny(
        csds.ClientConfigSchema,
        create(csds.ClientConfigSchema, {
          node: {
            id: p.id,
            metadata: {
              CLUSTER_ID: p.cluster,
              ...(p.namespace ? { NAMESPACE: p.namespace } : {}),
              ISTIO_VERSION: p.version,
            },
          },
          genericXdsConfigs: [
            { typeUrl: TypeUrl.Cluster, configStatus: status(p.cds) },
            { typeUrl: TypeUrl.Listener, configStatus: status(p.lds) },
            { typeUrl: TypeUrl.Route, configStatus: status(p.rds) },
            { typeUrl: TypeUrl.Endpoint, configStatus: status(p.eds) },
            { typeUrl: TypeUrl.ExtensionConfiguration, configStatus: status(p.ecds) },
          ],
        }),
      ),
    ),
  });
}

const proxy1: ProxyInput = {
  id: "proxy1",
  cluster: "cluster1",
  version: "1.20",
  cds: "STALE",
  lds: "SYNCED",
  rds: "NOT_SENT",
  eds: "SYNCED",
  ecds: "SYNCED",
};
const single = () => new Map([["istiod1", response("istiod1", [proxy1])]]);

golden("writer/pilot/testdata/multiXdsStatusMultiPilot.txt", () =>
  writeStatus(
    new Map([
      ["istiod1", response("istiod1", [proxy1])],
      [
        "istiod2",
        response("istiod2", [
          {
            id: "proxy2",
            cluster: "cluster2",
            version: "1.19",
            cds: "STALE",
            lds: "SYNCED",
            rds: "SYNCED",
            eds: "STALE",
            ecds: "STALE",
          },
        ]),
      ],
      [
        "istiod3",
        response("istiod3", [
          {
            id: "proxy3",
            cluster: "cluster3",
            version: "1.20",
            cds: "NOT_SENT",
            lds: "ERROR",
            rds: "NOT_SENT",
            eds: "STALE",
            ecds: "NOT_SENT",
          },
        ]),
      ],
      [
        "istiod4",
        response("istiod4", [
          {
            id: "proxy4",
            cluster: "cluster4",
            version: "1.20",
            cds: "UNKNOWN",
            lds: "UNKNOWN",
            rds: "UNKNOWN",
            eds: "UNKNOWN",
            ecds: "UNKNOWN",
          },
        ]),
      ],
    ]),
    { format: "table" },
  ),
);
golden("writer/pilot/testdata/multiXdsStatusSinglePilot.txt", () =>
  writeStatus(
    new Map([
      [
        "istiod1",
        response("istiod1", [
          { ...proxy1, ecds: "NOT_SENT" },
          {
            id: "proxy2",
            cluster: "cluster2",
            version: "1.20",
            cds: "STALE",
            lds: "SYNCED",
            rds: "SYNCED",
            eds: "STALE",
            ecds: "NOT_SENT",
          },
        ]),
      ],
    ]),
    { format: "table" },
  ),
);
golden("writer/pilot/testdata/multiXdsStatusMultiPilot_verbose.txt", () =>
  writeStatus(single(), { format: "table", verbose: true }),
);
golden("writer/pilot/testdata/multiXdsStatusSinglePilot.json", () => writeStatus(single(), { format: "json" }));
golden("writer/pilot/testdata/multiXdsStatusSinglePilot.yaml", () => writeStatus(single(), { format: "yaml" }));
golden("writer/pilot/testdata/multiXdsStatusSingleNamespace.yaml", () =>
  writeStatus(
    new Map([
      [
        "istiod1",
        response("istiod1", [
          { ...proxy1, namespace: "foo" },
          { ...proxy1, id: "proxy2", namespace: "bar" },
        ]),
      ],
    ]),
    { format: "yaml", namespace: "foo" },
  ),
);

const dumpAt = (path: string) => parseConfigDump(readFileSync(join(ROOT, path), "utf8"));
const configDumpDir = "writer/envoy/configdump/testdata";

golden(`${configDumpDir}/versionsummary.txt`, () => bootstrapSummary(dumpAt(`${configDumpDir}/configdump.json`)));
golden(`${configDumpDir}/ecds/output.txt`, () => ecdsSummary(dumpAt(`${configDumpDir}/ecds/configdump.json`)));
golden(`${configDumpDir}/endpoint/emptyfilter_output.txt`, () =>
  endpointSummary(dumpAt(`${configDumpDir}/endpoint/configdump.json`), {}, false),
);
golden(`${configDumpDir}/endpoint/portfilter_output.txt`, () =>
  endpointSummary(dumpAt(`${configDumpDir}/endpoint/configdump.json`), { port: 8080 }, false),
);
for (const name of ["empty-gateway", "istio-gateway-http-route-prefix", "k8s-gateway-http-route-path-prefix"]) {
  golden(`${configDumpDir}/routes/${name}/output.txt`, () =>
    routeSummary(dumpAt(`${configDumpDir}/routes/${name}/configdump.json`), { verbose: true }, false),
  );
}
for (const name of ["istio", "spire"]) {
  golden(`${configDumpDir}/secret/${name}/output`, () =>
    secretSummary(dumpAt(`${configDumpDir}/secret/${name}/config_dump.json`), false),
  );
}
const allFilters = { cluster: {}, listener: { verbose: true }, route: { verbose: true }, endpoint: {} };
golden("proxyconfig/testdata/config_dump_summary.txt", () =>
  fullSummary(dumpAt("proxyconfig/testdata/config_dump.json"), allFilters, false),
);
golden("proxyconfig/testdata/config_dump_summary_withheaders.txt", () =>
  fullSummary(dumpAt("proxyconfig/testdata/config_dump.json"), allFilters, true),
);

const noFilters = { cluster: {}, listener: { verbose: true }, route: { verbose: true }, endpoint: {} };
golden(`${configDumpDir}/bootstrapdump.json`, () =>
  proxyConfigOutput("bootstrap", dumpAt(`${configDumpDir}/configdump.json`), noFilters, "json"),
);
for (const format of ["json", "yaml"] as const) {
  golden(`${configDumpDir}/ecds/output.${format}`, () =>
    proxyConfigOutput("ecds", dumpAt(`${configDumpDir}/ecds/configdump.json`), noFilters, format),
  );
  for (const [name, endpoint] of [
    ["emptyfilter", {}],
    ["portfilter", { port: 8080 }],
  ] as const) {
    golden(`${configDumpDir}/endpoint/${name}_output.${format}`, () =>
      proxyConfigOutput(
        "endpoint",
        dumpAt(`${configDumpDir}/endpoint/configdump.json`),
        { ...noFilters, endpoint },
        format,
      ),
    );
  }
}
