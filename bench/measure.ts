// Timing helpers for benchmarks: run a function repeatedly and report the median and p99 in microseconds.
import { performance } from "node:perf_hooks";

export interface Timing {
  runs: number;
  medianUs: number;
  p99Us: number;
}

/** Times `runs` calls of `fn`, each after `beforeEach` (untimed). */
export function measure(runs: number, fn: (run: number) => void, beforeEach?: (run: number) => void): Timing {
  return timing(timedRuns(runs, fn, beforeEach));
}

function timedRuns(runs: number, fn: (run: number) => void, beforeEach?: (run: number) => void): number[] {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    beforeEach?.(run);
    const start = performance.now();
    fn(run);
    samples.push((performance.now() - start) * 1000);
  }
  return samples;
}

/** The most runs a timed round makes: Go's 1e9 would make a benchmark whose setup is slow take hours. */
const MAX_RUNS = 5000;

/**
 * Times `fn` on Go's testing schedule (B.launch), the one Istio's published figures were measured
 * with: a round of 1 run, then rounds of as many runs as the last round predicts will take
 * `benchtimeMs` of timed work (plus a fifth, at most 100 times the last round's), until a round takes
 * that long; only the last round is reported. The earlier rounds are the JIT's warm-up, as Go's are
 * its calibration. Only `fn` is timed; `beforeEach` (before each run) is not.
 */
export function measureFor(benchtimeMs: number, fn: (run: number) => void, beforeEach?: (run: number) => void): Timing {
  let runs = 1;
  let samples = timedRuns(runs, fn, beforeEach);
  let tookUs = sum(samples);
  while (tookUs < benchtimeMs * 1000 && runs < MAX_RUNS) {
    const last = runs;
    const predicted = Math.floor((benchtimeMs * 1000 * last) / Math.max(tookUs, 1));
    runs = Math.min(Math.max(Math.min(predicted + Math.floor(predicted / 5), 100 * last), last + 1), MAX_RUNS);
    samples = timedRuns(runs, fn, beforeEach);
    tookUs = sum(samples);
  }
  return timing(samples);
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** Median and p99 of samples in microseconds (sorts them). */
export function timing(samples: number[]): Timing {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { runs: samples.length, medianUs: at(0.5), p99Us: at(0.99) };
}
