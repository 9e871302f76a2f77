/**
 * Scale benchmark (issue 13): AGENTS agents sharing one simulated provider account of INSTANCES
 * instances, each agent owning its slice through an `instanceFilter` label prefix, on the Node
 * host's pieces with an embedded file database. Measures a full tick (every agent's tick, as the
 * fan-out's deliveries would run them one after another) in wall time and database round trips
 * (each one a Turso HTTP request on the Worker), one agent's tick alone, and memory. Writes its own
 * section of bench/RESULTS.md. Run alone: `tsx bench/scale.bench.ts`, or via `npm run bench`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { createNodeClient } from "../db/node-client.ts";
import { SIMULATOR_PAGE_SIZE, SimulatorProvider, simulatorPages } from "../fleet/providers/simulator.ts";
import { RECONCILE_PAGE } from "../fleet/instances/reconcile.ts";
import { FakeClock } from "../test/support/fake-clock.ts";
import { parseConfig } from "../runtime/config.ts";
import { silentLogger } from "../test/support/silent-logger.ts";
import { simulatorInstances } from "../schema/index.ts";
import { createAgent } from "../pipeline/index.ts";
import { minimalRunStep } from "../test/support/minimal-run-step.ts";
import type { PublishRequest, Scheduler } from "../pipeline/index.ts";
import { fanOutTick, tickAgent } from "../jobs/tick.ts";
import { countRoundTrips } from "./round-trips.ts";
import { writeSection } from "./results-file.ts";

const AGENTS = Number(process.env.SCALE_AGENTS ?? 100);
const INSTANCES = Number(process.env.SCALE_INSTANCES ?? 1000);
const HEADING = "## Scale: agents × instances (bench/scale.bench.ts)";
/** Random failures per instance per hour: about one failure in the account per tick at 1,000 instances. */
const FAILURE_RATE = "0.05";

class QueueScheduler implements Scheduler {
  readonly kind = "test" as const;
  readonly queue: PublishRequest[] = [];
  private readonly seen = new Set<string>();
  async publish(request: PublishRequest) {
    if (this.seen.has(request.dedupKey)) return;
    this.seen.add(request.dedupKey);
    this.queue.push(request);
  }
}

export async function scaleBench(): Promise<string> {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "fw-scale-")), "fw.db")}`;
  const counting = countRoundTrips(await createNodeClient(url));
  const db = openDatabase(counting.client);
  await applyMigrations(db);
  const clock = new FakeClock();
  const config = parseConfig(
    { DATABASE_URL: url, SIMULATOR_FAILURE_RATE: FAILURE_RATE, RECONCILE_INTERVAL_S: "60", ADMIN_TOKEN: "bench-admin-token-0123456789" },
    "node",
  );
  const scheduler = new QueueScheduler();
  const deps = {
    db,
    clock,
    config,
    scheduler,
    provider: new SimulatorProvider(db, clock),
    llm: null,
    runStep: minimalRunStep,
    log: silentLogger,
  };

  const perAgent = Math.ceil(INSTANCES / AGENTS);
  const rows = Array.from({ length: INSTANCES }, (_, i) => ({
    id: `sim-${i + 1}`,
    state: "running",
    label: `a${Math.floor(i / perAgent)}-node-${i}`,
    gpuName: "RTX 4090",
    gpuCount: 1,
    pricePerHour: 0.4,
    statusMessage: "running",
    startedAt: clock.now(),
    updatedAt: clock.now(),
  }));
  for (let i = 0; i < rows.length; i += 200) await db.insert(simulatorInstances).values(rows.slice(i, i + 200));
  for (let a = 0; a < AGENTS; a++)
    await createAgent(db, { id: `a${a}`, settings: { instanceFilter: { labelPrefix: `a${a}-` } } }, clock.now());

  async function fullTick(label: string) {
    clock.advance(61_000);
    const start = performance.now();
    const trips = counting.count();
    await fanOutTick(deps);
    const fanOutTrips = counting.count() - trips;
    const perTick: number[] = [];
    for (const p of scheduler.queue.splice(0)) {
      if (p.body.type !== "tick") continue;
      const before = counting.count();
      await tickAgent(deps, p.body.agentId);
      perTick.push(counting.count() - before);
    }
    const ms = performance.now() - start;
    perTick.sort((x, y) => x - y);
    const median = perTick[Math.floor(perTick.length / 2)];
    return `| ${label} | ${ms.toFixed(0)} ms | ${counting.count() - trips} | ${fanOutTrips} | ${perTick[0]}–${perTick.at(-1)} (median ${median}) |`;
  }

  const first = await fullTick("first tick (reconcile records every instance)");
  const second = await fullTick("second tick (random failures start)");
  const third = await fullTick("steady tick");
  globalThis.gc?.();
  const heapMb = (process.memoryUsage().heapUsed / 1e6).toFixed(1);
  const rssMb = (process.memoryUsage().rss / 1e6).toFixed(1);
  counting.client.close();
  const pages = simulatorPages(INSTANCES);
  return `${HEADING}

Written by \`tsx bench/scale.bench.ts\` (${new Date().toISOString().slice(0, 10)}): ${AGENTS} agents sharing one
simulated account of ${INSTANCES} instances (${perAgent} each, by label-prefix instance filter), embedded file
database, fake clock. A "full tick" is the fan-out plus every agent's tick delivery run one after another
in one process (on the Worker each is its own invocation). Round trips = libSQL client calls (each a
Turso HTTP request, i.e. a Worker subrequest).

| tick | wall time | DB round trips (total) | of which fan-out | per agent's tick (min–max; budget: ${pages} pages + 5) |
|---|---|---|---|---|
${first}
${second}
${third}

Memory after the three ticks: heap ${heapMb} MB, RSS ${rssMb} MB.

What grows with what: the fan-out grows with **agents** (one read; on QStash one batch request per 100 agents). An
agent's tick is its snapshot batch, the provider's pages (each agent lists the whole account, ${pages}
pages of ${SIMULATOR_PAGE_SIZE}, and keeps its own slice: a real provider's list works the same way),
one write batch per ${RECONCILE_PAGE} instances reconciliation recorded (the first tick records each;
a steady tick writes none), one write batch for all other checks' writes, and the agent row when
its per-process cache missed: issue 13's budget is provider pages + 5. The simulator's random
failures (SIMULATOR_FAILURE_RATE=${FAILURE_RATE} per instance per hour) cost no round trip of their own:
the whole account's roll windows are read and claimed in the snapshot (whichever agent's tick comes
first gets them), the instances that fail are written in the write batch, and their reports to
every agent take one more batch, only in a tick where something failed. **History** (events, runs,
notifications) is not read by the tick beyond indexed pending/poison/watchdog checks, and retention
prunes it after 7 days. Ingest p99 while these ticks run is measured by bench/busy.bench.ts (the
"Over HTTP" table).
`;
}

// Like bench/run.ts: the table goes to stdout; `npm run bench -- --write` also updates RESULTS.md.
if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await scaleBench();
  console.log(section);
  if (process.argv.includes("--write")) writeSection(HEADING, section);
}
