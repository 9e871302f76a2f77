/**
 * Issue 26's figures, each beside its baseline from the same run, with the load:
 * - wake lateness (the run's start − the wake's due time) on the Node host's pieces (a file
 *   database, the local scheduler on real timers, the real pipeline), against the path a due wake
 *   took before (a run requested through the 10 s state-change debounce);
 * - GET /api/agents/:agent/events at 1,500 and 51,500 events, against the plan it had before
 *   the `events_recent` index (the agent's events read and sorted whole);
 * - webhook ingest over HTTP with synchronous = FULL (the default) and NORMAL, each against the
 *   bare baseline at the same setting.
 * Writes its own section of bench/RESULTS.md with `--write`. Run alone: `tsx bench/speed.bench.ts`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openDatabase, type Db } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { createNodeClient } from "../db/node-client.ts";
import { buildApp } from "../functions/app.ts";
import { handleDelivery } from "../jobs/deliver.ts";
import type { Deps } from "../jobs/deps.ts";
import { createWake, DEFAULT_AGENT, ensureAgent, LocalScheduler, requestRun } from "../pipeline/index.ts";
import { SimulatorProvider } from "../fleet/providers/simulator.ts";
import { parseConfig } from "../runtime/config.ts";
import { systemClock } from "../runtime/clock.ts";
import { runs, wakes } from "../schema/index.ts";
import { minimalRunStep } from "../test/support/minimal-run-step.ts";
import { silentLogger } from "../test/support/silent-logger.ts";
import { fmtMs, table, type Row } from "./harness.ts";
import { BENCH_ADMIN_TOKEN, startBaseline, startFleetwarden, WEBHOOK_FLEET } from "./processes.ts";
import { loadNow, median, sample, signedWebhook, queue, summary, type Sample } from "./samples.ts";
import { drive } from "./load.ts";
import { writeSection } from "./results-file.ts";

export const SPEED_HEADING = "## Speed: on time, lists, durability (bench/speed.bench.ts)";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function nodeDeps(): Promise<{ deps: Deps; scheduler: LocalScheduler; db: Db }> {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "fw-speed-")), "fw.db")}`;
  const db = openDatabase(await createNodeClient(url));
  await applyMigrations(db);
  const config = parseConfig(
    { DATABASE_URL: url, ADMIN_TOKEN: BENCH_ADMIN_TOKEN, SIMULATOR_FAILURE_RATE: "0", WAKE_MIN_DELAY_S: "0" },
    "node",
  );
  await ensureAgent(db, DEFAULT_AGENT, systemClock.now());
  const scheduler = new LocalScheduler({ db, clock: systemClock, log: silentLogger, visibilityMs: config.runLeaseMs + 60_000 });
  const deps: Deps = {
    db,
    clock: systemClock,
    config,
    scheduler,
    provider: new SimulatorProvider(db, systemClock),
    llm: null,
    runStep: minimalRunStep,
    log: silentLogger,
  };
  await scheduler.start((body) => handleDelivery(deps, body));
  return { deps, scheduler, db };
}

/** Run start − due time of `count` wakes, one at a time; `viaDebounce` takes the old path. */
async function wakeLateness(count: number, viaDebounce: boolean): Promise<number[]> {
  const { deps, scheduler, db } = await nodeDeps();
  const late: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const dueAt = Date.now() + 300;
      const { id } = await createWake(
        viaDebounce ? { ...deps, scheduler: { kind: "test", publish: async () => {} } } : deps,
        DEFAULT_AGENT,
        { dueAt, reason: `bench ${i}`, createdByRun: null },
      );
      if (viaDebounce) {
        await sleep(dueAt - Date.now());
        await requestRun(deps, DEFAULT_AGENT, 1); // what a due wake's delivery did before issue 26
      }
      for (let waited = 0; waited < 30_000; waited += 20) {
        const [row] = await db.select({ run: wakes.consumedByRun }).from(wakes).where(eq(wakes.id, id));
        if (row?.run != null) {
          const [run] = await db.select({ startedAt: runs.startedAt }).from(runs).where(eq(runs.runId, row.run));
          late.push(run!.startedAt - dueAt);
          break;
        }
        await sleep(20);
      }
      await scheduler.settle();
    }
  } finally {
    await scheduler.stop();
  }
  return late;
}

/** Median time of the events route, and of the same page read by the plan before the index. */
async function eventsList(db: Db, app: ReturnType<typeof buildApp>): Promise<{ route: number; before: number }> {
  const timed = async (fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 25; i++) {
      const t = performance.now();
      await fn();
      times.push(performance.now() - t);
    }
    return median(times);
  };
  const headers = { Authorization: `Bearer ${BENCH_ADMIN_TOKEN}` };
  const route = await timed(async () => {
    const res = await app.request("/api/agents/default/events", { headers });
    if (res.status !== 200) throw new Error(`events route answered ${res.status}`);
    await res.json();
  });
  const before = await timed(() =>
    db.$client.execute({
      sql: "select * from events indexed by events_status where agent_id = ? order by id desc limit 100",
      args: [DEFAULT_AGENT],
    }),
  );
  return { route, before };
}

async function addEvents(db: Db, from: number, count: number): Promise<void> {
  await db.$client.execute({
    sql: `with recursive n(i) as (select ? union all select i + 1 from n where i < ?)
      insert into events (agent_id, source, priority, dedup_key, payload, status, run_id, attempts, created_at, consumed_at)
      select 'default', 'webhook', 1, 'bench:' || i, '{"instanceId":"i-1","state":"running"}', 'consumed', 1, 0, ?, ? from n`,
    args: [from, from + count - 1, Date.now(), Date.now()],
  });
}

async function listGrowth(rows: Row[]): Promise<void> {
  const { deps, scheduler, db } = await nodeDeps();
  await scheduler.stop();
  const app = buildApp(() => deps);
  await addEvents(db, 0, 1500);
  const small = await eventsList(db, app);
  const smallLoad = loadNow();
  await addEvents(db, 1500, 50_000);
  const large = await eventsList(db, app);
  rows.push(
    {
      benchmark: "GET /api/agents/:agent/events (100 newest), 1,500 events",
      variant: "route (events_recent)",
      result: `${fmtMs(small.route)} · load ${smallLoad}`,
      ratio: "1.00×",
    },
    {
      benchmark: "GET /api/agents/:agent/events (100 newest), 51,500 events",
      variant: "route (events_recent)",
      result: `${fmtMs(large.route)} · load ${loadNow()}`,
      ratio: `${(large.route / small.route).toFixed(2)}× of 1,500`,
    },
    {
      benchmark: "the same page, plan before the index (read and sort the agent's events)",
      variant: "baseline: 1,500 → 51,500",
      result: `${fmtMs(small.before)} → ${fmtMs(large.before)}`,
      ratio: `${(large.before / small.before).toFixed(2)}×`,
    },
  );
}

const FLEET = 200;
let sequence = 0;
function webhooks(count: number, tag: string) {
  return queue(
    Array.from({ length: count }, () => {
      const n = sequence++;
      return signedWebhook(
        "default",
        `${tag}_${n}`,
        JSON.stringify({ instanceId: `i-${n % FLEET}`, state: ["running", "loading", "exited"][Math.floor(n / FLEET) % 3] }),
      );
    }),
  );
}

async function durability(rows: Row[]): Promise<void> {
  const REPS = 3;
  const figures: Record<string, { fw: number; base: number; loads: string }> = {};
  for (const sync of ["full", "normal"] as const) {
    const fw = await startFleetwarden({
      ...WEBHOOK_FLEET,
      DEBOUNCE_STATE_MS: "3600000",
      DEBOUNCE_HUMAN_MS: "3600000",
      DATABASE_SYNC: sync,
    });
    const base = await startBaseline(sync);
    try {
      for (const s of [fw, base]) await drive(s.port, 32, webhooks(3000, `${sync}warm${s.port}`), 60_000);
      const f: Sample[] = [];
      const b: Sample[] = [];
      for (let rep = 0; rep < REPS; rep++) {
        for (const who of rep % 2 ? ["base", "fw"] : ["fw", "base"]) {
          const server = who === "fw" ? fw : base;
          (who === "fw" ? f : b).push(await sample(server.port, 32, webhooks(15_000, `${sync}${who}${rep}`), 2000, `${sync} ${who}`));
        }
      }
      const fs = summary(f);
      const bs = summary(b);
      figures[sync] = { fw: fs.rps, base: bs.rps, loads: fs.loads };
      rows.push(
        {
          benchmark: `webhooks over HTTP, 32 connections, synchronous = ${sync.toUpperCase()} (median of ${REPS})`,
          variant: "fleetwarden (Node host)",
          result: `${fs.rps.toFixed(0)} req/s · p99 ${fmtMs(fs.p99)} · load ${fs.loads}`,
          ratio: `${(fs.rps / bs.rps).toFixed(2)}× the baseline`,
        },
        {
          benchmark: `webhooks over HTTP, 32 connections, synchronous = ${sync.toUpperCase()} (median of ${REPS})`,
          variant: "baseline (one INSERT, same setting)",
          result: `${bs.rps.toFixed(0)} req/s · p99 ${fmtMs(bs.p99)} · load ${bs.loads}`,
          ratio: "1.00×",
        },
      );
    } finally {
      await fw.stop();
      await base.stop();
    }
  }
  rows.push({
    benchmark: "what FULL costs fleetwarden's ingest (FULL / NORMAL)",
    variant: "fleetwarden · baseline",
    result: `${(figures.full!.fw / figures.normal!.fw).toFixed(2)}× · ${(figures.full!.base / figures.normal!.base).toFixed(2)}×`,
    ratio: "",
  });
}

export async function speedBench(): Promise<string> {
  const rows: Row[] = [];
  const load = loadNow();
  const now = await wakeLateness(10, false);
  const before = await wakeLateness(3, true);
  const pct = (xs: number[]) => `median ${fmtMs(median(xs))} · max ${fmtMs(Math.max(...xs))}`;
  rows.push(
    {
      benchmark: "wake lateness (run start − due time), Node host pieces, file DB, real timers",
      variant: "a due wake's run at its due time, timer-armed scheduler (10 wakes)",
      result: `${pct(now)} · load ${load}`,
      ratio: "goal ≤ 1 s",
    },
    {
      benchmark: "wake lateness, the path before issue 26",
      variant: "baseline: through the 10 s state debounce (3 wakes)",
      result: `${pct(before)} · load ${loadNow()}`,
      ratio: `${(median(before) / Math.max(median(now), 1)).toFixed(0)}× later`,
    },
  );
  await listGrowth(rows);
  await durability(rows);
  return `${SPEED_HEADING}\n\nWritten by \`tsx bench/speed.bench.ts --write\` (${new Date().toISOString().slice(0, 10)}). The load column is the 1-minute load average of this shared 2-core machine when each figure was taken.\n\n${table(rows)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await speedBench();
  console.log(section);
  if (process.argv.includes("--write")) writeSection(SPEED_HEADING, section, "\n## QStash messages");
  process.exit(0);
}
