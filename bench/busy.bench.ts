/**
 * Ingest while the host is busy (issue 12 "runs do not stall ingest", issue 13 "ingest p99 while
 * ticks run"): signed webhooks at 64 connections against a fleetwarden Node host that is doing
 * other work at the same time, and against the bare baseline under the same load with nothing
 * else running anywhere.
 *
 * Fair by construction: only one server process exists during a sample (each repetition starts a
 * fresh host, loads it, stops it; the baseline gets its own turn), repetitions alternate who goes
 * first, both get the same warm-up and the same durability setting. Five repetitions; the ratio
 * column gives each repetition's p99 against the baseline's of the same repetition (issue 26: within
 * 2× in at least 4 of 5), and the CPU each side used, since on a small machine the host's threads
 * and the load driver share the cores. Two busy setups:
 * - runs: 200 simulated instances failing at 120 per hour each, 250 ms debounce windows, so the
 *   webhooks themselves keep requesting runs; the runs talk to a scripted OpenAI-compatible
 *   server over loopback HTTP (list_instances + remember, then an answer; summaries on request),
 *   so prompts, token counting, tool outputs and compaction are the real ones; POST /api/cron
 *   (every agent's tick: recovery, reconcile, heartbeats, watchdog; then retention) a second
 *   after the previous one finished.
 * - ticks: 100 agents sharing 1,000 simulated instances through label-prefix instance filters
 *   (written to the database before the host starts), no simulated failures, full ticks (all 100
 *   agents' ticks, POST /api/cron) back to back for the whole sample, webhooks spread over all
 *   agents; state debounce of an hour, so ticks are the only background work. Ticks never
 *   overlap: the next starts when the previous one answered (the production interval is a
 *   minute; back to back is the worst case that is still one tick at a time).
 * Both run at synchronous = FULL (the default); the runs run again at NORMAL (the opt-out, where
 * the baseline's lone insert is cheapest, so the hardest comparison).
 * Stopping a host waits for the work it has started (a tick, the deliveries of its own interval).
 */
import { createClient } from "@libsql/client";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedLlm } from "../test/support/scripted-llm.ts";
import { fmtMs, type Row } from "./harness.ts";
import { drive, type PreparedRequest } from "./load.ts";
import { median, queue, sample, signedWebhook, summary, type Sample } from "./samples.ts";
import { RUNS, scriptRuns, STATES, TICKS, type Busy, type Work } from "./busy-setups.ts";
import { BENCH_ADMIN_TOKEN, startBaseline, startFleetwarden, threadCpuSeconds, type Server } from "./processes.ts";

const REPS = Number(process.env.BUSY_REPS ?? 5);
const RUN_MS = 4000;
const WARMUP_REQUESTS = 600;
const CONNECTIONS = 64;
/** Pre-signed requests per sample: more than the fastest server answers in RUN_MS. */
const PER_SAMPLE = 16_000;
/** `BUSY_CPU_PROF=<dir>` writes each busy host's CPU profile and event-loop delay there (bench/host-profile.mjs). */
const PROFILE: Record<string, string> = process.env.BUSY_CPU_PROF
  ? { NODE_OPTIONS: `--import ${new URL("./host-profile.mjs", import.meta.url).pathname}`, BUSY_CPU_PROF: process.env.BUSY_CPU_PROF }
  : {};
/** `BUSY_ONLY=runs` or `ticks` runs one setup alone. */
const ONLY = process.env.BUSY_ONLY;
/**
 * Both servers' durability: `full` (the default) for both setups, then `normal` (the opt-out, where
 * the baseline's one insert is cheapest) for the runs; `BUSY_SYNC=full` or `normal` runs one.
 */
type Sync = "full" | "normal";
const SYNCS: readonly Sync[] =
  process.env.BUSY_SYNC === "full" || process.env.BUSY_SYNC === "normal" ? [process.env.BUSY_SYNC] : ["full", "normal"];

let sequence = 0;

function webhooks(busy: Busy, count: number, tag: string): () => PreparedRequest | null {
  return queue(
    Array.from({ length: count }, () => {
      const n = sequence++;
      const { agent, instance } = busy.target(n);
      return signedWebhook(agent, `${tag}_${n}`, JSON.stringify({ instanceId: instance, state: STATES[n % STATES.length] }));
    }),
  );
}

/** A sample and the CPU each side used during it, in cores (CPU seconds per second of the sample). */
interface Measured extends Sample {
  cpu: { main: number; others: number; driver: number };
}

/**
 * One sample, with the server's CPU (its event loop and its other threads) and this process's
 * (the load driver, and the scripted LLM the runs talk to) over the same seconds: on a small
 * machine the three share its cores, so p99 depends on who gets them.
 */
async function measure(server: Server, next: () => PreparedRequest | null, what: string): Promise<Measured> {
  const host = threadCpuSeconds(server.pid);
  const driver = process.cpuUsage();
  const result = await sample(server.port, CONNECTIONS, next, RUN_MS, what);
  const hostAfter = threadCpuSeconds(server.pid);
  const driverUsed = process.cpuUsage(driver);
  const cores = (seconds: number) => seconds / result.seconds;
  return {
    ...result,
    cpu: {
      main: cores(hostAfter.main - host.main),
      others: cores(hostAfter.others - host.others),
      driver: cores((driverUsed.user + driverUsed.system) / 1e6),
    },
  };
}

/** The median CPU of `samples` as the row shows it. */
function cpuText(samples: Measured[]): string {
  const m = (pick: (s: Measured) => number) => median(samples.map(pick)).toFixed(2);
  return `CPU (cores): event loop ${m((s) => s.cpu.main)}, its other threads ${m((s) => s.cpu.others)}, load driver ${m((s) => s.cpu.driver)}`;
}

/** Counts what the host did in [from, to] from its database, after it stopped. */
async function workDone(dbPath: string, from: number, to: number, ticks: number, llmCalls: number): Promise<Work> {
  const client = createClient({ url: `file:${dbPath}` });
  const { rows } = await client.execute({
    sql: "select count(*) as runs, coalesce(sum(decider = 'llm'), 0) as llm, coalesce(max(context_tokens), 0) as largest from runs where started_at between ? and ?",
    args: [from, to],
  });
  client.close();
  const row = rows[0]!;
  return { ticks, runs: Number(row.runs), llmRuns: Number(row.llm), llmCalls, largestPrompt: Number(row.largest) };
}

async function busySample(busy: Busy, llm: ScriptedLlm, rep: number, sync: Sync): Promise<{ sample: Measured; work: Work }> {
  const dbPath = join(mkdtempSync(join(tmpdir(), "fw-busy-")), "fleetwarden.db");
  await busy.prepare?.(dbPath);
  scriptRuns(llm, 4000);
  const fw = await startFleetwarden({ ...busy.env(llm.url), DATABASE_SYNC: sync, ...PROFILE }, dbPath);
  const tick = async () => {
    const res = await fetch(`http://127.0.0.1:${fw.port}/api/cron`, {
      method: "POST",
      headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
    });
    if (!res.ok) throw new Error(`cron tick answered ${res.status}: ${await res.text()}`);
  };
  try {
    // One tick first, so every agent has listed its instances: a report for an instance an agent's
    // label filter has not seen listed is refused (403), as it should be.
    await tick();
    const warm = await drive(fw.port, CONNECTIONS, webhooks(busy, WARMUP_REQUESTS, `warm${rep}`), 60_000);
    if (warm.errors) throw new Error(`warm-up: ${warm.errors} requests failed (status: count ${JSON.stringify(warm.failures)})`);
    let ticks = 0;
    let ticking = true;
    // Ticks one after another while the load runs; stopped by the flag cleared after the sample.
    const cron = (async () => {
      while (ticking) {
        await tick();
        ticks++;
        await new Promise((r) => setTimeout(r, busy.cronPauseMs));
      }
    })();
    // A failed sample stops the ticks too: their keep-alive connection would keep the host open.
    let measured: { sample: Measured; from: number; to: number; llmCalls: number };
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const llmBefore = llm.requests.length;
      const from = Date.now();
      const sample = await measure(fw, webhooks(busy, PER_SAMPLE, `busy${rep}`), "fleetwarden");
      measured = { sample, from, to: Date.now(), llmCalls: llm.requests.length - llmBefore };
    } finally {
      ticking = false;
      await cron;
    }
    await fw.stop();
    const { sample, from, to, llmCalls } = measured;
    return { sample, work: await workDone(dbPath, from, to, ticks, llmCalls) };
  } finally {
    await fw.stop();
  }
}

async function baselineSample(busy: Busy, rep: number, sync: Sync): Promise<Measured> {
  const base = await startBaseline(sync);
  try {
    await drive(base.port, CONNECTIONS, webhooks(busy, WARMUP_REQUESTS, `basewarm${rep}`), 60_000);
    return await measure(base, webhooks(busy, PER_SAMPLE, `base${rep}`), "baseline");
  } finally {
    await base.stop();
  }
}

async function compare(busy: Busy, llm: ScriptedLlm, rows: Row[], sync: Sync): Promise<void> {
  const fwSamples: Measured[] = [];
  const baseSamples: Measured[] = [];
  const works: Work[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    const fwFirst = rep % 2 === 0;
    if (!fwFirst) baseSamples.push(await baselineSample(busy, rep, sync));
    const { sample, work } = await busySample(busy, llm, rep, sync);
    fwSamples.push(sample);
    works.push(work);
    if (fwFirst) baseSamples.push(await baselineSample(busy, rep, sync));
  }
  const f = summary(fwSamples);
  const b = summary(baseSamples);
  const work = works.map((w) => busy.describe(w)).join("; ");
  const name = `${busy.name}, synchronous = ${sync.toUpperCase()}${sync === "full" ? " (the default)" : ""} (median of ${REPS})`;
  // Issue 26's goal is per repetition: p99 within 2× the baseline's of the same repetition.
  const ratios = fwSamples.map((s, i) => s.p99Ms / baseSamples[i]!.p99Ms);
  const within = ratios.filter((r) => r <= 2).length;
  rows.push({
    benchmark: name,
    variant: `fleetwarden, per repetition: ${work}`,
    result: `${f.rps.toFixed(0)} req/s · p50 ${fmtMs(f.p50)} · p99 ${fmtMs(f.p99)} · load ${f.loads} · ${cpuText(fwSamples)}`,
    ratio: `${(f.p99 / b.p99).toFixed(2)}× p99 (per repetition ${ratios.map((r) => `${r.toFixed(2)}×`).join(", ")}: ${within} of ${REPS} within 2×) · ${(f.rps / b.rps).toFixed(2)}× req/s`,
  });
  rows.push({
    benchmark: name,
    variant: "baseline (same load, its own turn, nothing else running)",
    result: `${b.rps.toFixed(0)} req/s · p50 ${fmtMs(b.p50)} · p99 ${fmtMs(b.p99)} · load ${b.loads} · ${cpuText(baseSamples)}`,
    ratio: "1.00×",
  });
}

export async function busyBench(): Promise<Row[]> {
  const llm = await new ScriptedLlm().start();
  llm.onSummary = () => ({ text: "Earlier runs read the fleet and pinned notes about instances that restarted." });
  const rows: Row[] = [];
  try {
    for (const sync of SYNCS) {
      if (ONLY !== "ticks") await compare(RUNS, llm, rows, sync);
      if (ONLY !== "runs" && sync === "full") await compare(TICKS, llm, rows, sync);
    }
  } finally {
    await llm.close();
  }
  return rows;
}

// Alone: `tsx bench/busy.bench.ts` prints its rows (npm run bench calls busyBench from bench/run.ts).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { table } = await import("./harness.ts");
  console.log(table(await busyBench()));
}
