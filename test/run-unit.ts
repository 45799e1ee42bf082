// node --import tsx test/run-unit.ts <test files...>   (what `npm run test:unit` runs)
//
// One real cluster per test run: starts etcd, kube-apiserver and kube-controller-manager once
// (test/cluster/, when `npm run peers` has built them), writes how to reach them to a JSON file in
// the cluster's directory and names it in $SLUICE_TEST_CLUSTER, then runs
//   node --import tsx --test --test-reporter=spec <test files...>
// with that environment, so that `sharedCluster()` in every test process attaches to this one
// cluster instead of starting its own. The cluster stops when the run ends (also on failure and
// on SIGINT/SIGTERM/SIGHUP, and by its watchdog if this process is killed), and the run's exit
// status is this one's.
//
// Not built: off CI one line says so and the tests run without a cluster (the cluster suites
// skip); with CI=true that fails at once, naming `npm run peers`.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { CLUSTER_ENV, Cluster, clusterSkipReason } from "./cluster/index.ts";

const say = (line: string) => process.stderr.write(`run-unit: ${line}\n`);

const files = process.argv.slice(2);
if (files.length === 0) {
  say("usage: node --import tsx test/run-unit.ts <test files...>");
  process.exit(2);
}

async function main(): Promise<number> {
  let skip: string | undefined;
  try {
    skip = clusterSkipReason();
  } catch (err) {
    say((err as Error).message);
    return 1;
  }
  const env = { ...process.env };
  let cluster: Cluster | undefined;
  if (skip) {
    say(`no test cluster (${skip}); the cluster suites skip`);
    delete env[CLUSTER_ENV];
  } else {
    try {
      cluster = await Cluster.start();
    } catch (err) {
      say((err as Error).message);
      return 1;
    }
    const infoFile = join(cluster.dir, "cluster.json");
    cluster.writeInfo(infoFile);
    env[CLUSTER_ENV] = infoFile;
    say(
      `test cluster ${cluster.url} ready in ${cluster.startSeconds} s ${JSON.stringify(cluster.startPhases)}` +
        `${cluster.hasControllerManager ? "" : " (no kube-controller-manager: deleted namespaces stay Terminating)"}; ${CLUSTER_ENV}=${infoFile}`,
    );
  }

  const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", ...files], {
    stdio: "inherit",
    env,
  });
  // A ^C reaches the test run directly (same process group); a signal sent to this process only is
  // passed on. Either way the run ends, and then the cluster stops.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  const status = await new Promise<number>((ok) => {
    child.once("error", (err) => {
      say(`could not run the tests: ${err.message}`);
      ok(1);
    });
    child.once("exit", (code, signal) => ok(code ?? (signal ? 128 + signalNumber(signal) : 1)));
  });
  await cluster?.stop();
  return status;
}

function signalNumber(signal: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}

process.exitCode = await main();
