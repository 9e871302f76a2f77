/**
 * What the HTTP benchmarks (http.bench.ts, busy.bench.ts) share: webhooks signed before the clock
 * starts, a sample of load with the machine's load average when it began, and the median summary
 * of repeated samples, so both report their figures the same way.
 */
import { loadavg } from "node:os";
import { Webhook } from "standardwebhooks";
import { drive, type LoadResult, type PreparedRequest } from "./load.ts";
import { BENCH_WEBHOOK_SECRET } from "./processes.ts";

const signer = new Webhook(BENCH_WEBHOOK_SECRET);

/** A Standard Webhooks request to `/webhooks/{agent}/instances`, signed now. */
export function signedWebhook(agentId: string, id: string, body: string): PreparedRequest {
  const at = new Date();
  return {
    path: `/webhooks/${agentId}/instances`,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signer.sign(id, at, body),
    },
    body,
  };
}

/** Hands out `list` once, in order; null when it is used up (the load driver then stops). */
export function queue(list: readonly PreparedRequest[]): () => PreparedRequest | null {
  let i = 0;
  return () => list[i++] ?? null;
}

/** The 1-minute load average, as every figure reports it. */
export const loadNow = () => loadavg()[0]!.toFixed(2);
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface Sample extends LoadResult {
  load: string;
}

/** One timed load of `port`; a failed request fails the benchmark (`what` names the sample). */
export async function sample(
  port: number,
  connections: number,
  next: () => PreparedRequest | null,
  ms: number,
  what: string,
): Promise<Sample> {
  const load = loadNow();
  const result = await drive(port, connections, next, ms);
  if (result.errors) throw new Error(`${what}: ${result.errors} requests failed (status: count ${JSON.stringify(result.failures)})`);
  return { ...result, load };
}

/** Medians of repeated samples, and the load each started at. */
export function summary(samples: Sample[]) {
  return {
    rps: median(samples.map((s) => s.reqPerSec)),
    p50: median(samples.map((s) => s.p50Ms)),
    p99: median(samples.map((s) => s.p99Ms)),
    loads: samples.map((s) => s.load).join("/"),
  };
}
