// Timing helpers for benchmarks: run a function repeatedly and report the median and p99 in microseconds.
import { performance } from "node:perf_hooks";

export interface Timing {
  runs: number;
  medianUs: number;
  p99Us: number;
}

/**
 * Times `runs` calls of `fn` (each after `beforeEach`, untimed). `warmup` calls go first, untimed (their
 * run is -1): the JIT's warm-up, as Go's testing package discards its calibration runs (b.N = 1, 100, ...).
 */
export function measure(
  runs: number,
  fn: (run: number) => void,
  beforeEach?: (run: number) => void,
  warmup = 0,
): Timing {
  for (let i = 0; i < warmup; i++) {
    beforeEach?.(-1);
    fn(-1);
  }
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    beforeEach?.(run);
    const start = performance.now();
    fn(run);
    samples.push((performance.now() - start) * 1000);
  }
  return timing(samples);
}

/** Median and p99 of samples in microseconds (sorts them). */
export function timing(samples: number[]): Timing {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { runs: samples.length, medianUs: at(0.5), p99Us: at(0.99) };
}
