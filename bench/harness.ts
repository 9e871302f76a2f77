/**
 * A tiny benchmark harness: time a function over repeated iterations after a warm-up, report the
 * median per-iteration time. Benchmarks compare variants measured side by side in one run, so
 * the ratio means something on a shared, noisy machine even when absolute times drift.
 */
export interface Measurement {
  name: string;
  medianMs: number;
  opsPerSec: number;
}

export async function measure(
  name: string,
  iterations: number,
  fn: (i: number) => Promise<unknown> | unknown,
  rounds = 5,
): Promise<Measurement> {
  for (let i = 0; i < Math.min(iterations, 20); i++) await fn(i);
  const perRound: number[] = [];
  let offset = 0;
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) await fn(offset + i);
    offset += iterations;
    perRound.push((performance.now() - start) / iterations);
  }
  perRound.sort((a, b) => a - b);
  const medianMs = perRound[Math.floor(perRound.length / 2)]!;
  return { name, medianMs, opsPerSec: 1000 / medianMs };
}

export interface Row {
  benchmark: string;
  variant: string;
  result: string;
  ratio: string;
}

export function table(rows: Row[]): string {
  const header = "| benchmark | variant | result | ratio |\n|---|---|---|---|";
  return [header, ...rows.map((r) => `| ${r.benchmark} | ${r.variant} | ${r.result} | ${r.ratio} |`)].join("\n");
}

export const fmtMs = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
