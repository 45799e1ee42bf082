// Runs the real `sluice` binary on temporary files: exit codes, exact output lines, JSON shape.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const SLUICE_BIN = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sluice-validate-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// A home without a config file, and none of the caller's SLUICE_* settings.
const home = join(dir, "home");
mkdirSync(home);
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith("SLUICE_") && name !== "XDG_CONFIG_HOME"),
);

function sluice(args: string[], options: { env?: Record<string, string>; input?: string } = {}) {
  const result = spawnSync(process.execPath, [SLUICE_BIN, ...args], {
    encoding: "utf8",
    env: { ...baseEnv, HOME: home, ...options.env },
    input: options.input,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function writeFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const VALID_VS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: reviews
  namespace: bookinfo
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews}
`;
// Rejected by the metadata checks, which run before (and instead of) any other check.
const BAD_NAME_VS = VALID_VS.replace("name: reviews", "name: Bad_Name").replace("  namespace: bookinfo\n", "");
const NAME_ERROR =
  "metadata.name: invalid name \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n";
// istioctl's words; it prints the template's (here absent) labels as Go prints a map.
const DEPLOYMENT_WARNING =
  "spec.template.metadata.labels: may not provide Istio metrics and telemetry labels: map[]. See https://istio.io/latest/docs/ops/deployment/requirements/";

const validFile = writeFile("valid.yaml", VALID_VS);
// Lines: VS 1-10, "---" 11, bad VS 12-20, "---" 21, Deployment 22-24.
const mixedFile = writeFile("mixed.yaml", `${VALID_VS}---\n${BAD_NAME_VS}---\n${DEPLOYMENT}`);

describe("sluice validate", () => {
  test("exits 0 and prints istioctl's summary when every document is valid", () => {
    const run = sluice(["validate", "-f", validFile]);
    assert.equal(run.stderr, "");
    assert.equal(run.stdout, `"${validFile}" is valid\n`);
    assert.equal(run.code, 0);
  });

  test("exits 1 with one Error line per invalid document and Warning lines, each with file:line", () => {
    const run = sluice(["validate", "--filename", mixedFile]);
    assert.equal(run.stdout.split("\n").length, 4, run.stdout);
    assert.equal(
      run.stdout,
      [
        `Error: VirtualService default/Bad_Name (${mixedFile}:12): ${NAME_ERROR}`,
        `Warning: Deployment default/web (${mixedFile}:22): ${DEPLOYMENT_WARNING}`,
        "validation failed: 1 of 3 documents invalid",
        "",
      ].join("\n"),
    );
    assert.equal(run.code, 1);
  });

  test("joins several errors of one document with '; ', each after its field path", () => {
    const file = writeFile(
      "gatewayclass.yaml",
      "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: Bad\n  namespace: x\nspec:\n  controllerName: example.com/gw\n",
    );
    const run = sluice(["validate", "-f", file]);
    const [errorLine] = run.stdout.split("\n");
    assert.match(
      errorLine,
      /^Error: GatewayClass x\/Bad \(.*gatewayclass\.yaml:1\): metadata\.name: invalid name "Bad": .*; metadata\.namespace: GatewayClass is cluster-scoped and cannot have a namespace$/,
    );
    assert.equal(run.code, 1);
  });

  test("refuses an integer its field's type cannot hold, naming the field", () => {
    const file = writeFile(
      "weight.yaml",
      VALID_VS.replace("{host: reviews}", "{host: reviews}\n      weight: 4294967296"),
    );
    const run = sluice(["validate", "-f", file]);
    assert.equal(
      run.stdout,
      [
        `Error: VirtualService bookinfo/reviews (${file}:1): spec.http[0].route[0].weight: json: cannot unmarshal number 4294967296 into Go value of type int32`,
        "validation failed: 1 of 1 documents invalid",
        "",
      ].join("\n"),
    );
    assert.equal(run.code, 1);
  });

  test("a malformed document gives one error and the documents after it are still checked", () => {
    const file = writeFile("broken.yaml", `${VALID_VS}---\nkind: [unclosed\n---\n${BAD_NAME_VS}`);
    const run = sluice(["validate", "-f", file]);
    const lines = run.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 3, run.stdout);
    assert.match(lines[0], new RegExp(`^Error: ${escapeRegExp(file)}:12: syntax error: .+`));
    assert.equal(lines[1], `Error: VirtualService default/Bad_Name (${file}:14): ${NAME_ERROR}`);
    assert.equal(lines[2], "validation failed: 2 of 3 documents invalid");
    assert.equal(run.code, 1);
  });

  test("-o json prints one object per document", () => {
    const run = sluice(["validate", "-f", mixedFile, "-o", "json"]);
    assert.equal(run.code, 1);
    const base = { file: mixedFile, apiVersion: "networking.istio.io/v1", kind: "VirtualService" };
    assert.deepEqual(JSON.parse(run.stdout), [
      { ...base, index: 0, line: 1, namespace: "bookinfo", name: "reviews", valid: true, errors: [], warnings: [] },
      {
        ...base,
        index: 1,
        line: 12,
        namespace: "default",
        name: "Bad_Name",
        valid: false,
        errors: [NAME_ERROR],
        warnings: [],
      },
      {
        file: mixedFile,
        index: 2,
        line: 22,
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "default",
        name: "web",
        valid: true,
        errors: [],
        warnings: [DEPLOYMENT_WARNING],
      },
    ]);
  });

  test("a decode error appears in JSON with null identity fields", () => {
    const file = writeFile("nokind.yaml", "apiVersion: v1\nmetadata: {name: x}\n");
    const run = sluice(["validate", "-f", file, "--output=json"]);
    assert.deepEqual(JSON.parse(run.stdout), [
      {
        file,
        index: 0,
        line: 1,
        apiVersion: null,
        kind: null,
        namespace: null,
        name: null,
        valid: false,
        errors: ['missing "kind"'],
        warnings: [],
      },
    ]);
    assert.equal(run.code, 1);
  });

  test("validates a directory recursively and reads standard input", () => {
    const tree = join(dir, "tree");
    mkdirSync(join(tree, "nested"), { recursive: true });
    writeFileSync(join(tree, "nested", "bad.yml"), BAD_NAME_VS);
    writeFileSync(
      join(tree, "ok.json"),
      JSON.stringify({ apiVersion: "v1", kind: "Service", metadata: { name: "s" } }),
    );
    const run = sluice(["validate", "-f", tree, "-o", "json"]);
    assert.deepEqual(
      JSON.parse(run.stdout).map((r: { file: string; valid: boolean }) => [r.file, r.valid]),
      [
        [join(tree, "nested", "bad.yml"), false],
        [join(tree, "ok.json"), true],
      ],
    );
    assert.equal(run.code, 1);

    const piped = sluice(["validate", "-f", "-"], { input: VALID_VS });
    assert.equal(piped.stdout, "validation succeed\n");
    assert.equal(piped.code, 0);
  });

  test("usage errors exit 2 with a message on stderr", () => {
    for (const args of [
      ["validate"],
      ["validate", "-f", join(dir, "missing.yaml")],
      ["validate", "-f", validFile, "-o", "yaml"],
      ["validate", "-f", validFile, "--bogus"],
      ["no-such-command"],
    ]) {
      const run = sluice(args);
      assert.equal(run.code, 2, `sluice ${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, /^Error: /, args.join(" "));
      assert.equal(run.stdout, "");
    }
    assert.match(
      sluice(["validate", "-f", join(dir, "missing.yaml")]).stderr,
      /no such file or directory: .*missing\.yaml/,
    );
  });

  test("a file that cannot be read exits 2", () => {
    const brokenLinkDir = join(dir, "broken-link");
    mkdirSync(brokenLinkDir);
    symlinkSync(join(dir, "nowhere.yaml"), join(brokenLinkDir, "link.yaml"));
    const run = sluice(["validate", "-f", brokenLinkDir]);
    assert.match(run.stderr, /^Error: ENOENT: .*link\.yaml/);
    assert.equal(run.code, 2);
  });

  test("takes defaults from the config file and SLUICE_* variables; flags win", () => {
    const configFile = writeFile("cli-config.yaml", "output: json\n");
    assert.doesNotThrow(() =>
      JSON.parse(sluice(["validate", "-f", validFile], { env: { SLUICE_CONFIG: configFile } }).stdout),
    );
    assert.doesNotThrow(() => JSON.parse(sluice(["--config", configFile, "validate", "-f", validFile]).stdout));

    const xdgHome = join(dir, "xdg");
    mkdirSync(join(xdgHome, "sluice"), { recursive: true });
    writeFileSync(join(xdgHome, "sluice", "config.yaml"), "output: json\n");
    assert.doesNotThrow(() =>
      JSON.parse(sluice(["validate", "-f", validFile], { env: { XDG_CONFIG_HOME: xdgHome } }).stdout),
    );

    const fromEnv = sluice(["validate", "-f", validFile], {
      env: { SLUICE_OUTPUT: "json", SLUICE_CONFORMANCE_DIR: dir },
    });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal(JSON.parse(fromEnv.stdout).length, 1);

    const flagWins = sluice(["validate", "-f", validFile, "-o", "text"], { env: { SLUICE_OUTPUT: "json" } });
    assert.equal(flagWins.stdout, `"${validFile}" is valid\n`);

    const missingConfig = sluice(["validate", "-f", validFile], { env: { SLUICE_CONFIG: join(dir, "none.yaml") } });
    assert.equal(missingConfig.code, 2);
    assert.match(missingConfig.stderr, /config file .*none\.yaml does not exist/);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
