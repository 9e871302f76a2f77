/**
 * GET /metrics at 1,000 instances (issue 36): the real Node host (`npm start`'s functions/node.ts,
 * a file database) scraped over HTTP, against a bare baseline (bench/metrics-baseline-server.ts:
 * plain Hono + libSQL answering the same grouped counts from a copy of the same database). The
 * database holds one agent with 1,000 live instances and a month of history (30,000 runs, 30,000
 * actions, 10,000 notification deliveries), so the figure is what a scrape costs on a busy
 * deployment. Scrapes alternate between the two servers, one at a time.
 * Writes its own section of bench/RESULTS.md with `--write`. Run alone: `tsx bench/metrics.bench.ts`.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { createNodeClient } from "../db/node-client.ts";
import { DEFAULT_AGENT, ensureAgent } from "../pipeline/index.ts";
import { actions, instances, notificationDeliveries, notifications, runs } from "../schema/index.ts";
import { freePort } from "../test/support/child-process-waits.ts";
import { fmtMs, table, type Row } from "./harness.ts";
import { BENCH_ADMIN_TOKEN, startFleetwarden } from "./processes.ts";
import { writeSection } from "./results-file.ts";

export const METRICS_HEADING = "## GET /metrics at 1,000 instances (bench/metrics.bench.ts)";
const INSTANCES = 1_000;
const HISTORY = 30_000;
const SCRAPES = 60;
const STATES = ["running", "running", "running", "stopped", "exited", "loading", "offline"];

async function seed(path: string): Promise<void> {
  const client = await createNodeClient(`file:${path}`);
  const db = openDatabase(client);
  await applyMigrations(db);
  const now = Date.now();
  await ensureAgent(db, DEFAULT_AGENT, now);
  for (let i = 0; i < INSTANCES; i += 250) {
    await db.insert(instances).values(
      Array.from({ length: 250 }, (_, k) => ({
        agentId: DEFAULT_AGENT,
        id: `i-${i + k}`,
        state: STATES[(i + k) % STATES.length]!,
        stateAt: now,
        lastSeenAt: now,
        updatedAt: now,
        pricePerHour: 1 + ((i + k) % 7),
        storagePerHour: 0.05,
      })),
    );
  }
  for (let i = 0; i < HISTORY; i += 500) {
    const at = (k: number) => now - (HISTORY - i - k) * 90_000;
    await db.insert(runs).values(
      Array.from({ length: 500 }, (_, k) => ({
        agentId: DEFAULT_AGENT,
        runId: i + k + 1,
        status: (i + k) % 20 === 0 ? "failed" : "succeeded",
        decider: (i + k) % 3 === 0 ? "rules" : "llm",
        sessionEpoch: 1,
        promptTokens: 6000,
        completionTokens: 200,
        startedAt: at(k),
        finishedAt: at(k) + 4000,
      })),
    );
    await db.insert(actions).values(
      Array.from({ length: 500 }, (_, k) => ({
        agentId: DEFAULT_AGENT,
        instanceId: `i-${(i + k) % INSTANCES}`,
        kind: ["start", "stop", "reboot", "destroy"][(i + k) % 4]!,
        status: (i + k) % 10 === 0 ? "awaiting_approval" : "succeeded",
        decidedBy: "llm",
        idempotencyKey: `bench-${i + k}`,
        createdAt: at(k),
      })),
    );
  }
  for (let i = 0; i < HISTORY / 3; i += 500) {
    const rows = await db
      .insert(notifications)
      .values(
        Array.from({ length: 500 }, (_, k) => ({
          agentId: DEFAULT_AGENT,
          title: "t",
          body: "b",
          severity: "info",
          dedupKey: `n-${i + k}`,
          createdAt: now - k,
        })),
      )
      .returning({ id: notifications.id });
    await db
      .insert(notificationDeliveries)
      .values(rows.map((r, k) => ({ notificationId: r.id, channel: k % 2 ? "slack" : "ntfy", status: k % 25 ? "delivered" : "failed" })));
  }
  client.close();
}

async function startMetricsBaseline(path: string): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "bench/metrics-baseline-server.ts", path, String(port), BENCH_ADMIN_TOKEN], {
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`the metrics baseline exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function scrape(port: number): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}: ${text.slice(0, 200)}`);
  return { ms: performance.now() - started, bytes: text.length };
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

export async function metricsBench(): Promise<{ rows: Row[]; section: string }> {
  const dir = mkdtempSync(join(tmpdir(), "fw-metrics-"));
  const ours = join(dir, "fleetwarden.db");
  await seed(ours);
  const copy = join(dir, "baseline.db");
  copyFileSync(ours, copy);
  const fleetwarden = await startFleetwarden({ SIMULATOR_INSTANCES: "0" }, ours);
  const baseline = await startMetricsBaseline(copy);
  const times = { fw: [] as number[], base: [] as number[] };
  let bytes = { fw: 0, base: 0 };
  try {
    // Warm both (statement caches, page cache), then alternate.
    for (let i = 0; i < 3; i++) await Promise.all([scrape(fleetwarden.port), scrape(baseline.port)]);
    for (let i = 0; i < SCRAPES; i++) {
      const a = await scrape(fleetwarden.port);
      const b = await scrape(baseline.port);
      times.fw.push(a.ms);
      times.base.push(b.ms);
      bytes = { fw: a.bytes, base: b.bytes };
    }
  } finally {
    await Promise.all([fleetwarden.stop(), baseline.stop()]);
  }
  const p50 = { fw: quantile(times.fw, 0.5), base: quantile(times.base, 0.5) };
  const p95 = { fw: quantile(times.fw, 0.95), base: quantile(times.base, 0.95) };
  const what = `GET /metrics, ${INSTANCES.toLocaleString("en-US")} instances, ${HISTORY.toLocaleString("en-US")} runs and actions (${SCRAPES} scrapes each)`;
  const rows: Row[] = [
    {
      benchmark: what,
      variant: "fleetwarden (Node host, file DB)",
      result: `p50 ${fmtMs(p50.fw)} · p95 ${fmtMs(p95.fw)} · ${(bytes.fw / 1024).toFixed(1)} KiB`,
      ratio: `${(p50.fw / p50.base).toFixed(2)}× p50`,
    },
    {
      benchmark: what,
      variant: "baseline (Hono + libSQL, the same grouped counts)",
      result: `p50 ${fmtMs(p50.base)} · p95 ${fmtMs(p95.base)} · ${(bytes.base / 1024).toFixed(1)} KiB`,
      ratio: "1.00×",
    },
  ];
  const section = `${METRICS_HEADING}

${table(rows)}

One scrape is one database batch of grouped counts over covering indexes (runs_metrics,
actions_metrics): it reads index entries, not table rows, so its cost grows with history (runs,
actions and deliveries are never pruned) at index-scan speed. At one scrape a minute that is well
under a second of CPU an hour. The baseline runs the same counts without spend, burn, the duration
histogram, watchdog and scheduler series or the token lookup.
`;
  return { rows, section };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { section } = await metricsBench();
  console.log(section);
  if (process.argv.includes("--write")) writeSection(METRICS_HEADING, section);
}
