import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { test } from "node:test";
import yargs from "yargs";
import { clusterSkipReason, sharedCluster } from "../../test/cluster/index.ts";
import { KubeClient } from "../sources/kube/client.ts";
import { analyzeCommand } from "./analyze.ts";
import { ANALYZE_DEFAULTS, type AnalyzeOptions, runAnalyzeCommand } from "./analyze-run.ts";
import { EXIT_ANALYZER_FOUND_ISSUES, EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { configureCliLog } from "./log.ts";

const skip = clusterSkipReason();

const VIRTUAL_SERVICE = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: reviews
spec:
  hosts: [reviews]
  gateways: [missing-gw]
  http:
  - route:
    - destination:
        host: reviews
---
apiVersion: v1
kind: Service
metadata:
  name: reviews
  namespace: other
spec:
  ports:
  - port: 9080
    name: foo
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: reviews
  namespace: other
spec:
  host: reviews
  trafficPolicy:
    tls:
      mode: SIMPLE
`;

async function run(files: string[], overrides: Partial<AnalyzeOptions> = {}) {
  let stdout = "";
  let stderr = "";
  const code = await runAnalyzeCommand({
    ...ANALYZE_DEFAULTS,
    files,
    istioNamespace: "istio-system",
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    ...overrides,
  });
  return { code, stdout, stderr };
}

function writeConfig(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "sluice-analyze-")), "config.yaml");
  writeFileSync(file, text);
  return file;
}

test("messages print as istioctl's log lines, and an Error exits 79", async () => {
  const file = writeConfig(VIRTUAL_SERVICE);
  const { code, stdout, stderr } = await run([file]);
  assert.equal(code, EXIT_ANALYZER_FOUND_ISSUES);
  // Lines are the fields' (here gateways[0]), as istioctl reads them from the file. The Service is not
  // read (nor the host checked against it): see the next test.
  assert.equal(
    stdout,
    [
      `Error [IST0101] (VirtualService default/reviews ${file}:7) Referenced gateway not found: "missing-gw"`,
      `Warning [IST0132] (VirtualService default/reviews ${file}:7) one or more host [reviews] defined in VirtualService default/reviews not found in Gateway default/missing-gw.`,
      "",
    ].join("\n"),
  );

  assert.match(stderr, /^Error: Analyzers found issues when analyzing namespace: default\.\n/);
});

test("without a cluster, as istioctl --use-kube=false: files give no Services, Namespaces, Nodes, Pods or Secrets, and the analyzers reading them are skipped", async () => {
  const { stdout, stderr } = await run([writeConfig(VIRTUAL_SERVICE)], { allNamespaces: true, verbose: true });
  // No "Referenced host not found" (virtualservice.DestinationHostAnalyzer), no IST0118 about the
  // Service's port name (service.PortNameAnalyzer).
  assert.doesNotMatch(stdout, /IST0118|Referenced host not found/);
  const skipped = stderr.slice(stderr.indexOf("Skipped analyzers:\n"), stderr.indexOf("Executed analyzers:"));
  assert.match(skipped, /\t service\.PortNameAnalyzer\n/);
  assert.match(skipped, /\t virtualservice\.DestinationHostAnalyzer\n/);
  assert.doesNotMatch(skipped, /virtualservice\.GatewayAnalyzer/);
  // istioctl lists every selected analyzer as executed, the skipped ones too.
  assert.match(stderr.slice(stderr.indexOf("Executed analyzers:")), /\t service\.PortNameAnalyzer\n/);
});

test("-A shows every namespace; objects without one keep an empty namespace", async () => {
  const { stdout } = await run([writeConfig(VIRTUAL_SERVICE)], { allNamespaces: true });
  assert.match(stdout, /\(VirtualService reviews /);
  assert.match(
    stdout,
    /Warning \[IST0128\] \(DestinationRule other\/reviews .*:23\) DestinationRule other\/reviews in namespace other has TLS mode set to SIMPLE/,
  );
  assert.doesNotMatch((await run([writeConfig(VIRTUAL_SERVICE)])).stdout, /IST0128/);
});

test("schema.ValidationAnalyzer runs Istio's ValidateConfig alone: no CRD schema (unknown fields), no metadata checks", async () => {
  const file = writeConfig(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ws
  namespace: testns
  annotations:
    istio.io/dry-run: "true"
spec:
  hosts: []
  http:
  - websocketUpgrade: true
    route:
    - destination:
        host: reviews
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: dr
  namespace: testns
spec:
  host: reviews
  trafficPolicy:
    loadBalancer:
      consistentHash:
        httpCookie:
          ttl: 1s
`);
  // istioctl analyze --use-kube=false -A prints exactly this line for the file.
  assert.equal(
    (await run([file], { allNamespaces: true })).stdout,
    `Error [IST0106] (DestinationRule testns/dr ${file}:16) Schema validation error: name required for HttpCookie\n`,
  );
});

test("a --meshConfigFile that is invalid or missing is not used, as istioctl; the analysis goes on with the defaults", async () => {
  const file = writeConfig(VIRTUAL_SERVICE);
  const plain = await run([file]);
  const invalid = writeConfig("connectTimeout: 0.0001s\n");
  for (const meshConfigFile of [invalid, `${invalid}.absent`]) {
    const { code, stdout, stderr } = await run([file], { meshConfigFile });
    assert.equal(code, plain.code);
    assert.equal(stdout, plain.stdout);
    assert.match(stderr, new RegExp(`^Warning: --meshConfigFile ${meshConfigFile} is not used: `));
  }
});

test("thresholds: output filters what is shown, failure decides the exit code", async () => {
  const file = writeConfig(VIRTUAL_SERVICE);
  const errorsOnly = await run([file], { outputThreshold: "Error" });
  assert.equal(errorsOnly.stdout.trim().split("\n").length, 1);
  const warnFails = await run([file], { analyzers: ["virtualservice.GatewayAnalyzer"], failureThreshold: "Warning" });
  assert.equal(warnFails.code, EXIT_ANALYZER_FOUND_ISSUES);
});

test("suppressions by flag and annotation", async () => {
  const file = writeConfig(VIRTUAL_SERVICE);
  const { code, stdout } = await run([file], { suppress: ["IST0101=VirtualService default/*"] });
  assert.equal(code, EXIT_OK);
  assert.doesNotMatch(stdout, /IST0101/);
  assert.match(stdout, /IST0132/);
  const annotated = writeConfig(
    VIRTUAL_SERVICE.replace(
      "  name: reviews\nspec:\n  hosts",
      '  name: reviews\n  annotations:\n    galley.istio.io/analyze-suppress: "*"\nspec:\n  hosts',
    ),
  );
  assert.equal((await run([annotated])).stdout, "\n");
});

test("json output is istioctl's object list, and json never fails the run", async () => {
  const { code, stdout } = await run([writeConfig(VIRTUAL_SERVICE)], { output: "json" });
  assert.equal(code, EXIT_OK);
  const messages = JSON.parse(stdout) as Record<string, string>[];
  assert.deepEqual(Object.keys(messages[0]), ["code", "documentationUrl", "level", "message", "origin", "reference"]);
  assert.equal(
    messages[0].documentationUrl,
    "https://istio.io/latest/docs/reference/config/analysis/ist0101/?ref=istioctl-analyze",
  );
});

test("a clean file says so; an unparseable document exits 1", async () => {
  const clean = writeConfig("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
  const ok = await run([clean]);
  assert.equal(ok.code, EXIT_OK);
  assert.equal(ok.stderr, `\u2714 No validation issues found when analyzing ${clean}.\n`);
  const broken = await run([writeConfig("kind: [unclosed\n")]);
  assert.equal(broken.code, EXIT_INVALID);
  assert.equal((await run([writeConfig("kind: [unclosed\n")], { ignoreUnknown: true })).code, EXIT_OK);
});

test("explicit files without a YAML or JSON extension are skipped, as istioctl does", async () => {
  const text = join(mkdtempSync(join(tmpdir(), "sluice-analyze-")), "notes.txt");
  writeFileSync(text, VIRTUAL_SERVICE);
  const { code, stdout, stderr } = await run([text]);
  assert.equal(code, EXIT_OK);
  assert.equal(stdout, "\n");
  assert.equal(
    stderr,
    `Skipping file ${text}, recognized file extensions are: [.json .yaml .yml]\n\u2714 No validation issues found when analyzing namespace: default.\n`,
  );
});

test("--list-analyzers lists every analyzer by name", async () => {
  const { code, stdout } = await run([], { listAnalyzers: true });
  assert.equal(code, EXIT_OK);
  assert.match(stdout, /^\* annotations\.K8sAnalyzer:\n {4}Checks for misplaced and invalid Istio annotations/);
  assert.match(stdout, /\* applicationUID\.Analyzer:\n {4}Checks invalid application UID\n/);
  assert.match(stdout, /\* virtualservice\.GatewayAnalyzer:/);
});

test("--use-kube: the cluster's objects and mesh config are analyzed, files override them", { skip }, async () => {
  const kube = await sharedCluster();
  // The test's namespaces stand for "default" and "istio-system".
  const ns = await kube.namespace("default");
  const istioNamespace = await kube.namespace("istio-system");
  const create = (path: string, obj: object) =>
    kube.must("POST", `/apis/networking.istio.io/v1/namespaces/${ns}/${path}`, obj);
  // With a cluster, istioctl assumes no default ingress gateway: this Gateway selects nothing.
  await create("gateways", {
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name: "ingress", namespace: ns },
    spec: {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    },
  });
  await create("virtualservices", {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "in-cluster", namespace: ns },
    spec: {
      hosts: ["a.example.com"],
      gateways: ["cluster-gw"],
      http: [{ route: [{ destination: { host: "a.example.com" } }] }],
    },
  });
  await create("serviceentries", {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "a", namespace: ns },
    spec: {
      hosts: ["a.example.com"],
      addresses: ["10.0.0.1"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    },
  });
  const cluster = new KubeClient(kube.kubeConfig());

  const { code, stdout } = await run([], {
    cluster,
    namespace: ns,
    istioNamespace,
    analyzers: ["virtualservice.GatewayAnalyzer", "virtualservice.DestinationHostAnalyzer"],
  });
  assert.equal(code, EXIT_ANALYZER_FOUND_ISSUES);
  // No file, so no reference; the host resolves through the cluster's ServiceEntry.
  assert.equal(
    stdout,
    `Error [IST0101] (VirtualService ${ns}/in-cluster) Referenced gateway not found: "cluster-gw"\n` +
      `Warning [IST0132] (VirtualService ${ns}/in-cluster) one or more host [a.example.com] defined in VirtualService ${ns}/in-cluster not found in Gateway ${ns}/cluster-gw.\n`,
  );

  // A file with the same VirtualService replaces the cluster's.
  const file = writeConfig(
    `apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: in-cluster\n  namespace: ${ns}\nspec:\n  hosts: [a.example.com]\n  http:\n  - route:\n    - destination:\n        host: a.example.com\n`,
  );
  const overridden = await run([file], {
    cluster,
    namespace: ns,
    istioNamespace,
    analyzers: ["virtualservice.GatewayAnalyzer"],
  });
  assert.equal(overridden.code, EXIT_OK);
  assert.equal(overridden.stderr, `\u2714 No validation issues found when analyzing ${file}.\n`);

  const ingress = await run([], {
    cluster,
    namespace: ns,
    istioNamespace,
    analyzers: ["gateway.IngressGatewayPortAnalyzer"],
  });
  assert.equal(
    ingress.stdout,
    `Error [IST0101] (Gateway ${ns}/ingress) Referenced selector not found: "istio=ingressgateway"\n`,
  );

  const nowhere = `${ns}-nowhere`;
  const missing = await run([], { cluster, namespace: nowhere, istioNamespace });
  assert.equal(missing.code, EXIT_OK);
  assert.equal(missing.stderr, `namespace "${nowhere}" not found\n`);
});

test("flags: repeatable --analyzer and -S do not swallow the files after them; levels are case-insensitive", async () => {
  let parsed: Record<string, unknown> = {};
  await yargs()
    .command({
      ...analyzeCommand,
      handler: (argv) => {
        parsed = argv;
      },
    })
    .parseAsync([
      "analyze",
      "--analyzer",
      "a.A",
      "-S",
      "IST0101=*",
      "--failure-threshold",
      "warning",
      "x.yaml",
      "y.yaml",
    ]);
  assert.deepEqual(parsed.files, ["x.yaml", "y.yaml"]);
  assert.deepEqual(parsed.analyzer, ["a.A"]);
  assert.deepEqual(parsed.suppress, ["IST0101=*"]);
  assert.equal(parsed["failure-threshold"], "Warning");
});

test("--log_output_level debug: a line per file read and per kind listed from the cluster", { skip }, async (t) => {
  const kube = await sharedCluster();
  const ns = await kube.namespace("default");
  // Kinds are listed across all namespaces, which other tests may share: this one's Gateway is counted.
  await kube.must("POST", `/apis/networking.istio.io/v1/namespaces/${ns}/gateways`, {
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name: "counted", namespace: ns },
    spec: {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    },
  });
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")));
      done();
    },
  });
  configureCliLog("debug", sink);
  t.after(() => configureCliLog(undefined));
  const file = writeConfig(VIRTUAL_SERVICE);
  await run([file], {
    cluster: new KubeClient(kube.kubeConfig()),
    namespace: ns,
    analyzers: ["virtualservice.GatewayAnalyzer"],
  });
  assert.ok(lines.some((l) => l.scope === "default" && l.msg === "read config file" && l.file === file));
  const listed = lines.filter((l) => l.scope === "kube" && l.msg === "listed from the cluster");
  assert.ok(
    listed.some((l) => l.kind === "networking.istio.io/Gateway" && typeof l.items === "number" && l.items >= 1),
    JSON.stringify(lines),
  );
});
