// `sluice bug-report` against the real test cluster (test/cluster): a namespace with a VirtualService,
// a Secret and two sidecar pods of a Deployment, an istiod pod in a stand-in Istio namespace, and
// another namespace to leave out. The cluster has no kubelet, so the CLI goes through
// test/portforward's front: istiod's 15014 reaches a sluiced (its monitoring port, serving the debug
// endpoints), one sidecar's 15000 a small Envoy admin; the other sidecar's admin and every pod's log
// are out of reach, and the archive's summary must say so. With istioctl built, its archive's layout
// is compared with sluice's.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";
import { PortForwardFront } from "../portforward/index.ts";
import { tarFiles } from "../support/tar.ts";
import { loggedLine, runSluice, stopProcess } from "./processes.ts";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));
const skip = clusterSkipReason();
/** The Secret's value: it may reach the archive only with --full-secrets. */
const SECRET_VALUE = "not-a-real-password-7f3a";
const SECRET_BASE64 = Buffer.from(SECRET_VALUE).toString("base64");

let dir: string;
let kubeconfig: string;
let cluster: Cluster;
let front: PortForwardFront;
let sluiced: ReturnType<typeof spawn>;
let envoyAdmin: Server;
let istioNs = "";
let shop = "";
let other = "";

/** A Deployment, its ReplicaSet and one Running pod of it, as the controllers and kubelet would make them. */
async function deployment(
  namespace: string,
  name: string,
  containers: string[],
  labels: Record<string, string>,
  nodeName?: string,
) {
  const spec = {
    selector: { matchLabels: labels },
    template: {
      metadata: { labels },
      spec: { nodeName, containers: containers.map((c) => ({ name: c, image: c })) },
    },
  };
  const made = await cluster.must("POST", `/apis/apps/v1/namespaces/${namespace}/deployments`, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec,
  });
  const owner = (kind: string, object: { metadata: { name: string; uid: string } }, apiVersion: string) => [
    { apiVersion, kind, name: object.metadata.name, uid: object.metadata.uid, controller: true },
  ];
  const rs = await cluster.must("POST", `/apis/apps/v1/namespaces/${namespace}/replicasets`, {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: `${name}-5d8f`, namespace, ownerReferences: owner("Deployment", made.body, "apps/v1") },
    spec,
  });
  const pods = `/api/v1/namespaces/${namespace}/pods`;
  const pod = await cluster.must("POST", pods, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${name}-5d8f-x2x`, namespace, labels, ownerReferences: owner("ReplicaSet", rs.body, "apps/v1") },
    spec: spec.template.spec,
  });
  await cluster.must("PUT", `${pods}/${pod.body.metadata.name}/status`, {
    ...pod.body,
    status: { phase: "Running" },
  });
  return pod.body.metadata.name as string;
}

let istiodPod = "";
let productpagePod = "";
let ratingsPod = "";

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), "sluice-bug-report-"));
  cluster = await sharedCluster();
  front = await PortForwardFront.start(cluster.kubeConfig());
  kubeconfig = join(dir, "kubeconfig");
  front.writeKubeconfig(kubeconfig);
  istioNs = await cluster.namespace("istio-system");
  shop = await cluster.namespace("shop");
  other = await cluster.namespace("other");

  await cluster.must("POST", `/apis/networking.istio.io/v1/namespaces/${shop}/virtualservices`, {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "reviews-route", namespace: shop },
    spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
  });
  await cluster.must("POST", `/api/v1/namespaces/${shop}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "db-credentials", namespace: shop },
    data: { password: SECRET_BASE64 },
  });
  await cluster.must("POST", `/api/v1/namespaces/${other}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "left-out", namespace: other },
    data: { a: "b" },
  });
  istiodPod = await deployment(istioNs, "istiod", ["discovery"], { app: "istiod", "istio.io/rev": "default" });
  productpagePod = await deployment(shop, "productpage-v1", ["app", "istio-proxy"], { app: "productpage" });
  // Bound to a node that has no kubelet (no Node at all): the API server cannot fetch its log.
  ratingsPod = await deployment(shop, "ratings-v1", ["app", "istio-proxy"], { app: "ratings" }, "worker-1");

  // An Envoy admin answering whatever bug-report asks for.
  envoyAdmin = createServer((req, res) => {
    if (req.url === "/config_dump?include_eds") res.end('{"configs":[]}\n');
    else if (req.url === "/server_info") res.end('{"state":"LIVE"}\n');
    else res.end(`${req.url}\n`);
  });
  await new Promise<void>((resolve) => envoyAdmin.listen(0, "127.0.0.1", resolve));
  front.forwardPodPort({ name: productpagePod, namespace: shop }, 15000, (envoyAdmin.address() as AddressInfo).port);

  const configDir = join(dir, "config");
  await mkdir(configDir);
  await writeFile(
    join(configDir, "vs.yaml"),
    "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: from-sluiced, namespace: default}\nspec: {hosts: [a]}\n",
  );
  sluiced = spawn(
    process.execPath,
    [
      SLUICED,
      ...["--configDir", configDir, "--caDir", join(dir, "ca")],
      ...["--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "", "--httpsAddr", ""],
      ...["--httpAddr", "", "--monitoringAddr", "127.0.0.1:0"],
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const admin = await loggedLine(sluiced, (l) => l.msg === "admin HTTP server listening");
  front.forwardPodPort({ name: istiodPod, namespace: istioNs }, 15014, admin.monitoringPort as number);
});

after(async () => {
  await stopProcess(sluiced);
  await new Promise((resolve) => envoyAdmin?.close(resolve));
  await front?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function bugReport(out: string, ...args: string[]): Promise<Map<string, string>> {
  await mkdir(out, { recursive: true });
  const { stdout, code } = await runSluice([
    "bug-report",
    ...["--kubeconfig", kubeconfig, "--istio-namespace", istioNs, "--output-dir", out],
    ...args,
  ]);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /✅ Creating an archive at .*bug-report\.tar\.gz\./);
  return tarFiles(await readFile(join(out, "bug-report.tar.gz")));
}

let report: Map<string, string>;

test("the archive holds the included namespaces' resources, the control plane's debug endpoints and what was not collected", {
  skip,
}, async () => {
  report = await bugReport(join(dir, "first"), "--include", `${shop},${istioNs}`);
  const file = (path: string) => {
    const text = report.get(`bug-report/${path}`);
    assert.ok(
      text !== undefined,
      `bug-report/${path} in the archive; its summary:\n${report.get("bug-report/summary")}`,
    );
    return text;
  };
  // The cluster's context, its version and resources, as kubectl would print them.
  assert.match(file("cluster/cluster-context"), /^\S+\nhttp:\/\/127\.0\.0\.1:\d+\n$/);
  assert.match(file("cluster/kubectl-version"), /\nServer Version: v1\.\d+/);
  const crs = file("cluster/crs");
  assert.match(crs, /^apiVersion: v1\nitems:\n/);
  assert.match(
    crs,
    new RegExp(`kind: VirtualService\n  metadata:\n(    .*\n)*    name: reviews-route\n    namespace: ${shop}\n`),
  );
  const resources = file("cluster/k8s-resources");
  assert.match(resources, new RegExp(`name: ${productpagePod}\n`));
  assert.match(resources, /kind: Deployment\n/);
  assert.doesNotMatch(resources, /name: left-out/, "a namespace not included is not dumped");
  assert.match(file("cluster/k8s-cluster-resources"), /kind: CustomResourceDefinition/);
  assert.match(file("cluster/pods"), new RegExp(`name: ${istiodPod}\n`));

  // Secrets: a table without their data.
  const secrets = file("cluster/secrets");
  assert.match(secrets, /^NAMESPACE\s+NAME\s+TYPE\s+DATA\s+AGE\n/);
  assert.match(secrets, new RegExp(`\\n${shop}\\s+db-credentials\\s+Opaque\\s+1\\s+\\S+\\n`));
  for (const [path, text] of report) {
    assert.ok(!text.includes(SECRET_BASE64) && !text.includes(SECRET_VALUE), `the secret's value is in ${path}`);
  }

  // istiod's debug endpoints, from sluiced's monitoring port through the port-forward.
  const istiod = `istio/${istioNs}/${istiodPod}`;
  assert.match(file(`${istiod}/debug/configz`), /from-sluiced/);
  assert.doesNotThrow(() => JSON.parse(file(`${istiod}/debug/syncz`)));
  assert.match(file(`${istiod}/metrics`), /# TYPE pilot_xds_pushes/);
  assert.match(file("versions"), new RegExp(`Revision default:\n${istiodPod}: \\S+`));

  // The reachable sidecar's Envoy admin; the other's could not be forwarded.
  assert.equal(file(`proxies/${shop}/${productpagePod}/config_dump?include_eds`), '{"configs":[]}\n');
  assert.equal(file(`proxies/${shop}/${productpagePod}/server_info`), '{"state":"LIVE"}\n');

  const summary = file("summary");
  const missing = (item: string) => {
    const line = summary.split("\n").find((l) => l.startsWith(`  ${item}`));
    assert.ok(line, `${item} in the summary:\n${summary}`);
    return line;
  };
  // The API server answers an empty log for a pod no node runs; the summary says so.
  assert.match(missing(`${istiod}/discovery.log:`), /not scheduled on a node, so no kubelet holds its log/);
  assert.match(missing(`proxies/${shop}/${productpagePod}/istio-proxy.log:`), /no kubelet/);
  assert.match(
    missing(`proxies/${shop}/${ratingsPod}/istio-proxy.log:`),
    /the API server gave no log \(the kubelet serves them\): \S/,
  );
  // sluiced serves no /debug/inject (istiod's injection template listing).
  assert.match(missing(`${istiod}/debug/inject:`), /the control plane's monitoring port answered HTTP 404/);
  assert.match(missing(`proxies/${shop}/${ratingsPod}/{certs,`), /Envoy admin \(port 15000\) could not be reached: /);
  assert.match(missing(`proxies/${shop}/${ratingsPod}/netstat:`), /kubectl exec/);
  assert.match(summary, /secrets: listed without their data/);
  assert.match(file("bug-report.log"), /Target cluster context/);
  // The analysis ran (its messages, if any, in analyze/allNamespaces/allNamespaces).
  assert.ok(!summary.includes("analyze/"), summary);
});

test("--full-secrets writes the secrets in full; --exclude leaves a namespace out", { skip }, async () => {
  const full = await bugReport(
    join(dir, "second"),
    ...["--include", `${shop},${other}`, "--exclude", other, "--full-secrets", "--skip-analyze"],
  );
  const secrets = full.get("bug-report/cluster/secrets") ?? "";
  assert.match(secrets, new RegExp(`password: ${SECRET_BASE64}\n`));
  assert.doesNotMatch(full.get("bug-report/cluster/k8s-resources") ?? "", /name: left-out/);

  const withOther = await bugReport(join(dir, "third"), "--include", `${shop},${other}`, "--skip-analyze");
  assert.match(withOther.get("bug-report/cluster/k8s-resources") ?? "", /name: left-out/);
  // istiod's namespace is not included, so neither are its pods' debug endpoints.
  assert.ok(![...withOther.keys()].some((k) => k.startsWith("bug-report/istio/")), [...withOther.keys()].join("\n"));
});

test("-f reads istioctl's bug-report config fields; flags given override them; a bad file is a usage error", {
  skip,
}, async () => {
  const config = join(dir, "bug-report.yaml");
  await writeFile(
    config,
    [
      `include: ["${shop},${other}"]`,
      `exclude: ["${other}"]`,
      "fullSecrets: true",
      "skipAnalyze: true",
      "criticalErrors: ['*x509*']",
      "ignoredErrors: ['*deprecated*', '*retry*']",
      "",
    ].join("\n"),
  );
  const fromFile = await bugReport(join(dir, "from-file"), "-f", config);
  assert.match(fromFile.get("bug-report/cluster/secrets") ?? "", new RegExp(`password: ${SECRET_BASE64}\n`));
  const resources = fromFile.get("bug-report/cluster/k8s-resources") ?? "";
  assert.match(resources, new RegExp(`name: ${productpagePod}\n`), "the file's include");
  assert.doesNotMatch(resources, /name: left-out/, "the file's exclude");
  const summary = fromFile.get("bug-report/summary") ?? "";
  assert.match(summary, /\ncritical-errs: \*x509\*\nignore-errs: \*deprecated\*,\*retry\*\n/);
  assert.doesNotMatch(
    fromFile.get("bug-report/bug-report.log") ?? "",
    /Running Istio analyze/,
    "the file's skipAnalyze",
  );

  // The flags given replace the file's settings, a list whole: --exclude names shop instead of other.
  const overridden = await bugReport(
    join(dir, "overridden"),
    ...["-f", config, "--exclude", shop, "--no-full-secrets", "--ignore-errs", "*eof*"],
  );
  const secrets = overridden.get("bug-report/cluster/secrets") ?? "";
  assert.doesNotMatch(secrets, new RegExp(SECRET_BASE64));
  const kept = overridden.get("bug-report/cluster/k8s-resources") ?? "";
  assert.match(kept, /name: left-out/);
  assert.doesNotMatch(kept, new RegExp(`name: ${productpagePod}\n`));
  assert.match(overridden.get("bug-report/summary") ?? "", /\ncritical-errs: \*x509\*\nignore-errs: \*eof\*\n/);

  // A bad file, field or glob: exit 2, naming the file and the field.
  const usage = async (args: string[], message: RegExp) => {
    const { stdout, code } = await runSluice(["bug-report", "--kubeconfig", kubeconfig, ...args]);
    assert.equal(code, 2, stdout);
    assert.match(stdout, message);
  };
  const bad = join(dir, "bad.yaml");
  await writeFile(bad, "tailLines: 10\nincludes: [a]\n");
  await usage(["-f", bad], new RegExp(`Error: ${bad}: unknown field "includes"; the fields are kubeConfigPath, `));
  await writeFile(bad, "ignoredErrors: ['*ok*', 'a[']\n");
  await usage(["-f", bad], new RegExp(`Error: ${bad}: field ignoredErrors\\[1\\]: bad glob pattern "a\\["`));
  await writeFile(bad, "include: [a\n");
  await usage(["-f", bad], new RegExp(`Error: ${bad}: not valid YAML: `));
  await usage(
    ["-f", join(dir, "missing.yaml")],
    /Error: cannot read the bug-report config file .*missing\.yaml: ENOENT/,
  );
  await usage(["--critical-errs", "*ok*,[x"], /Error: --critical-errs\[1\]: bad glob pattern "\[x"/);
});

const istioctlSkip = skip || peersSkipReason("istioctl");

test("the archive's folders are istioctl's", { skip: istioctlSkip }, async () => {
  const out = join(dir, "istioctl");
  await mkdir(out);
  const args = ["bug-report", "--kubeconfig", kubeconfig, "--istio-namespace", istioNs, "--output-dir", out];
  await promisify(execFile)(
    requirePeer("istioctl"),
    [...args, "--include", `${shop},${istioNs}`, "--timeout", "2m", "--dir", join(out, "tmp")],
    { maxBuffer: 64 * 1024 * 1024, timeout: 300_000 },
  ).catch((err: { stdout?: string; stderr?: string }) => {
    assert.fail(`istioctl bug-report failed: ${err.stderr ?? ""}${err.stdout ?? ""}`);
  });
  const theirs = tarFiles(await readFile(join(out, "bug-report.tar.gz")));
  // istioctl with --dir archives that directory's contents; sluice with --dir does the same.
  const ours = await bugReport(join(dir, "ours"), "--include", `${shop},${istioNs}`, "--dir", join(dir, "ours-tmp"));
  // istioctl's files are a subset of sluice's: without a kubelet it has no logs; its port-forwards
  // (SPDY, the port in a header) do not pass test/portforward's front, so it has no proxies/; it execs into istiod
  // for the debug endpoints (so no istio/), and kubectl refuses `get secrets -n a,b` (so no secrets
  // or events with two --include namespaces).
  const listing = `istioctl's:\n${[...theirs.keys()].join("\n")}\nsluice's:\n${[...ours.keys()].join("\n")}`;
  for (const path of theirs.keys()) assert.ok(ours.has(path), `istioctl's ${path} is in sluice's archive; ${listing}`);
  assert.ok(theirs.has("cluster/k8s-resources") && theirs.has("versions"), listing);
});
