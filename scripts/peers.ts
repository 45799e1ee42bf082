// npm run peers [-- [--force] [--list] [name...]]
//
// Builds the reference programs pinned in test/peers/versions.json (a real kube-apiserver, etcd,
// istiod, istioctl and our grpc-go xDS peer) from their public Go modules into the peers cache
// (~/.cache/sluice/peers/<name>-<version>/, or $SLUICE_PEERS_DIR), for tests and benchmarks only:
// nothing built here ships in the npm package, and no binary or other project's source is
// committed. A program already built from the current pins is skipped, so a second run takes a
// moment. Prints "<name> <path>" for each program on stdout; progress goes to stderr and each
// build's full output to <dir>/build.log.
//
// A program from another project is built from a throwaway module generated in <dir>/src that
// requires the pinned module and mirrors its go.mod: its go and godebug lines, its replace lines
// that point at other modules, and, for the replace lines that point at its own staging folders
// (k8s.io/kubernetes), the staging modules at `stagingVersion`. Then
//   go get <package>@<version> && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w ..." -o <dir>/<name> <package>
// Our own program (`dir`) is built in place from its committed go.mod and go.sum.
//
//   --force  rebuild even when built
//   --list   only print the programs' paths and whether each is built (exit 1 if one is not)
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type PeerProgram,
  type PeerStamp,
  peerBinary,
  peerDir,
  peerPrograms,
  peerStatus,
  REPO_ROOT,
  recipeKey,
  stampFile,
} from "../test/peers/paths.ts";

class StepError extends Error {
  constructor(
    readonly program: string,
    readonly step: string,
    readonly why: string,
  ) {
    super(`${program}: ${step} failed: ${why}`);
  }
}

const log = (msg: string) => process.stderr.write(`peers: ${msg}\n`);

interface RunResult {
  code: number;
  /** stdout and stderr as they came. */
  output: string;
  stdout: string;
}

/** Runs a command, appending its output to `logFile`; resolves with its exit code and output. */
function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; logFile?: string }) {
  return new Promise<RunResult>((resolve, reject) => {
    const logStream = opts.logFile ? createWriteStream(opts.logFile, { flags: "a" }) : undefined;
    logStream?.write(
      `\n$ (cd ${opts.cwd} && ${cmd} ${args.map((a) => (/[\s"]/.test(a) ? JSON.stringify(a) : a)).join(" ")})\n`,
    );
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let stdout = "";
    const take = (b: Buffer) => {
      output += b.toString();
      logStream?.write(b);
    };
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
      take(b);
    });
    child.stderr.on("data", take);
    child.on("error", (err) => {
      logStream?.end();
      reject(err);
    });
    child.on("close", (code, signal) => {
      const result = { code: code ?? (signal ? 128 : 1), output, stdout };
      if (logStream) logStream.end(() => resolve(result));
      else resolve(result);
    });
  });
}

const tail = (s: string, lines = 25) => s.trimEnd().split("\n").slice(-lines).join("\n");

/** Runs one step of a program's build; a non-zero exit is a StepError naming the program and step. */
async function step(
  p: PeerProgram,
  name: string,
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; logFile?: string },
): Promise<RunResult> {
  let r: RunResult;
  try {
    r = await run(cmd, args, opts);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new StepError(p.name, name, e.code === "ENOENT" ? `${cmd} is not installed or not on PATH` : e.message);
  }
  if (r.code !== 0) {
    const where = opts.logFile ? ` (full output: ${opts.logFile})` : "";
    throw new StepError(p.name, name, `exit status ${r.code}${where}\n${tail(r.output)}`);
  }
  return r;
}

interface GoEnv {
  version: string;
  goos: string;
  goarch: string;
}

/** The go command's version and target, with the build's environment (GOTOOLCHAIN included). */
async function goEnv(p: PeerProgram, env: NodeJS.ProcessEnv, logFile: string): Promise<GoEnv> {
  const what = p.toolchain ? `go env (GOTOOLCHAIN=${p.toolchain})` : "go env (is Go installed?)";
  const out = await step(p, what, "go", ["env", "GOVERSION", "GOOS", "GOARCH"], { cwd: REPO_ROOT, env, logFile });
  const [version, goos, goarch] = out.stdout.trim().split("\n");
  return { version, goos, goarch };
}

/** -1, 0 or 1 as Go version a ("1.25.0", "go1.26.8") is older, the same or newer than b. */
function compareGo(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^go/, "")
      .split(/[.a-z]/)
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** A module that needs a newer Go than the build's fails here, saying what to pin. */
function checkGoVersion(p: PeerProgram, needed: string | undefined, env: GoEnv, where: string): void {
  if (!needed || compareGo(needed, env.version) <= 0) return;
  throw new StepError(
    p.name,
    "check Go version",
    `${where} needs go ${needed}, the build has ${env.version}: install a newer Go, or pin one in ` +
      `test/peers/versions.json ("toolchain": "go${needed}" on ${p.name}), which becomes GOTOOLCHAIN and is fetched through the module proxy`,
  );
}

/** The parts of a go.mod the throwaway module mirrors. */
interface GoMod {
  go?: string;
  godebug: string[];
  require: Map<string, string>;
  replace: { old: string; oldVersion?: string; target: string; targetVersion?: string }[];
}

function parseGoMod(text: string): GoMod {
  const mod: GoMod = { godebug: [], require: new Map(), replace: [] };
  let block: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\/\/.*$/, "").trim();
    if (!line) continue;
    if (block) {
      if (line === ")") {
        block = undefined;
        continue;
      }
      directive(block, line);
      continue;
    }
    const m = /^(\w+)\s*(\()?\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[2]) block = m[1];
    else directive(m[1], m[3]);
  }
  return mod;

  function directive(verb: string, rest: string) {
    const f = rest.split(/\s+/);
    if (verb === "go") mod.go = f[0];
    else if (verb === "godebug") mod.godebug.push(rest);
    else if (verb === "require") mod.require.set(f[0], f[1]);
    else if (verb === "replace") {
      const arrow = f.indexOf("=>");
      if (arrow < 0) return;
      mod.replace.push({
        old: f[0],
        oldVersion: f[1] === "=>" ? undefined : f[1],
        target: f[arrow + 1],
        targetVersion: f[arrow + 2],
      });
    }
  }
}

const isLocalPath = (target: string) => target.startsWith("./") || target.startsWith("../") || target.startsWith("/");

/** The throwaway module's go.mod for an upstream program, and notes on what it dropped. */
function throwawayGoMod(p: PeerProgram, upstream: GoMod): { text: string; notes: string[] } {
  const notes: string[] = [];
  const replaces: string[] = [];
  for (const r of upstream.replace) {
    const old = r.oldVersion ? `${r.old} ${r.oldVersion}` : r.old;
    if (!isLocalPath(r.target)) {
      replaces.push(`\t${old} => ${r.target}${r.targetVersion ? ` ${r.targetVersion}` : ""}`);
    } else if (p.stagingVersion && upstream.require.has(r.old)) {
      replaces.push(`\t${r.old} => ${r.old} ${p.stagingVersion}`);
    } else {
      notes.push(`dropped ${r.old} => ${r.target} (a folder of ${p.module}; its required version applies)`);
    }
  }
  const lines = [
    `// Generated by sluice scripts/peers.ts to build ${p.package}@${p.version}; not part of Sluice.`,
    `module sluice.peers/${p.name}`,
    "",
    `go ${upstream.go ?? "1.22"}`,
    "",
  ];
  for (const d of upstream.godebug) lines.push(`godebug ${d}`);
  if (upstream.godebug.length) lines.push("");
  lines.push(`require ${p.module} ${p.version}`, "");
  if (replaces.length) lines.push("replace (", ...replaces, ")", "");
  return { text: lines.join("\n"), notes };
}

function ldflags(p: PeerProgram, env: GoEnv): string {
  const extra = (p.ldflags ?? []).map((f) => f.replaceAll("{goos}", env.goos).replaceAll("{goarch}", env.goarch));
  return ["-s", "-w", ...extra].join(" ");
}

async function build(p: PeerProgram): Promise<string> {
  const started = Date.now();
  const dir = peerDir(p);
  const bin = peerBinary(p);
  const logFile = join(dir, "build.log");
  mkdirSync(dir, { recursive: true });
  rmSync(stampFile(p), { force: true });
  writeFileSync(logFile, `build of ${p.name} ${p.version} at ${new Date().toISOString()}\n`);
  const goenv: NodeJS.ProcessEnv = { ...process.env, CGO_ENABLED: "0", GOTOOLCHAIN: p.toolchain ?? "local" };
  const env = await goEnv(p, goenv, logFile);
  const tmp = `${bin}.tmp`;
  const buildArgs = ["build", "-trimpath", `-ldflags=${ldflags(p, env)}`, "-o", tmp];

  if (p.dir) {
    const src = join(REPO_ROOT, p.dir);
    const mod = parseGoMod(readFileSync(join(src, "go.mod"), "utf8"));
    if (mod.require.get(p.module) !== p.version) {
      throw new StepError(
        p.name,
        "check pins",
        `${p.dir}/go.mod requires ${p.module} ${mod.require.get(p.module) ?? "(nothing)"}, versions.json says ${p.version}`,
      );
    }
    checkGoVersion(p, mod.go, env, `${p.dir}/go.mod`);
    log(`${p.name}: go build in ${p.dir}`);
    await step(p, "go build", "go", [...buildArgs, p.package], { cwd: src, env: goenv, logFile });
  } else {
    const src = join(dir, "src");
    rmSync(src, { recursive: true, force: true });
    mkdirSync(src, { recursive: true });
    log(`${p.name}: go mod download ${p.module}@${p.version}`);
    const info = JSON.parse(
      await step(p, "go mod download", "go", ["mod", "download", "-json", `${p.module}@${p.version}`], {
        cwd: src,
        env: goenv,
        logFile,
      }).then((r) => r.stdout),
    ) as { GoMod?: string; Error?: string };
    if (!info.GoMod) throw new StepError(p.name, "go mod download", info.Error ?? "no go.mod in the answer");
    const upstream = parseGoMod(readFileSync(info.GoMod, "utf8"));
    checkGoVersion(p, upstream.go, env, `${p.module}@${p.version}`);
    const { text, notes } = throwawayGoMod(p, upstream);
    writeFileSync(join(src, "go.mod"), text);
    writeFileSync(logFile, `${notes.join("\n")}\n--- go.mod\n${text}`, { flag: "a" });
    log(`${p.name}: go get ${p.package}@${p.version}`);
    await step(p, "go get", "go", ["get", `${p.package}@${p.version}`], { cwd: src, env: goenv, logFile });
    log(`${p.name}: go build ${p.package} (cold builds take minutes)`);
    await step(p, "go build", "go", [...buildArgs, p.package], { cwd: src, env: goenv, logFile });
  }

  const ran = await step(p, `run ${p.name} ${(p.versionArgs ?? []).join(" ")}`, tmp, p.versionArgs ?? [], {
    cwd: dir,
    logFile,
  });
  const versionOutput = (ran.stdout.trim() || ran.output.trim()).trim();
  renameSync(tmp, bin);
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const stamp: PeerStamp = {
    key: recipeKey(p),
    name: p.name,
    version: p.version,
    go: env.version,
    builtAt: new Date().toISOString(),
    seconds,
    versionOutput,
  };
  writeFileSync(stampFile(p), `${JSON.stringify(stamp, null, 2)}\n`);
  log(`${p.name}: built in ${seconds} s: ${versionOutput.split("\n")[0]}`);
  return bin;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const force = args.includes("--force");
  const list = args.includes("--list");
  const names = args.filter((a) => !a.startsWith("--"));
  const unknownFlag = args.find((a) => a.startsWith("--") && a !== "--force" && a !== "--list");
  if (unknownFlag) {
    log(`unknown flag ${unknownFlag} (usage: npm run peers -- [--force] [--list] [name...])`);
    return 2;
  }
  const all = peerPrograms();
  const unknown = names.filter((n) => !all.some((p) => p.name === n));
  if (unknown.length) {
    log(`unknown program(s) ${unknown.join(", ")}; known: ${all.map((p) => p.name).join(", ")}`);
    return 2;
  }
  const chosen = names.length ? all.filter((p) => names.includes(p.name)) : all;

  if (list) {
    let missing = 0;
    for (const p of chosen) {
      const s = peerStatus(p.name);
      if (s.missing) missing++;
      process.stdout.write(`${p.name} ${s.path}${s.missing ? ` (${s.missing})` : ""}\n`);
    }
    return missing ? 1 : 0;
  }

  const failed: string[] = [];
  for (const p of chosen) {
    const s = peerStatus(p.name);
    if (!force && !s.missing) {
      process.stdout.write(`${p.name} ${s.path}\n`);
      continue;
    }
    try {
      const bin = await build(p);
      process.stdout.write(`${p.name} ${bin}\n`);
    } catch (err) {
      failed.push(p.name);
      log(err instanceof Error ? err.message : String(err));
    }
  }
  if (failed.length) log(`not built: ${failed.join(", ")}`);
  return failed.length ? 1 : 0;
}

process.exitCode = await main();
