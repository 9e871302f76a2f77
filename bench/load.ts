/**
 * The HTTP load driver of the benchmark: N keep-alive connections (node:http), each sending
 * pre-built requests back to back for a fixed duration or a fixed count, recording every
 * latency. Loopback only; every loop is bounded by its deadline or its request count.
 */
import { Agent, request } from "node:http";

export interface PreparedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How many answers of each failing status (0: the connection failed), so a failure names itself. */
  failures: Record<number, number>;
}

function send(agent: Agent, port: number, req: PreparedRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: req.path,
        agent,
        headers: { ...req.headers, "content-length": Buffer.byteLength(req.body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    r.on("error", reject);
    r.end(req.body);
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/**
 * Drives `port` with `connections` connections, taking requests from `next()` until it returns
 * null or `durationMs` passes.
 */
export async function drive(
  port: number,
  connections: number,
  next: () => PreparedRequest | null,
  durationMs: number,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let errors = 0;
  const failures: Record<number, number> = {};
  const failed = (status: number) => {
    errors++;
    failures[status] = (failures[status] ?? 0) + 1;
  };
  const started = performance.now();
  const deadline = started + durationMs;
  const connection = async () => {
    while (performance.now() < deadline) {
      const req = next();
      if (!req) return;
      const t0 = performance.now();
      try {
        const status = await send(agent, port, req);
        if (status >= 300) failed(status);
      } catch {
        failed(0);
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: connections }, connection));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds,
    reqPerSec: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies[latencies.length - 1] ?? 0,
    failures,
  };
}
