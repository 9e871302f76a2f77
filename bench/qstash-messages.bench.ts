/**
 * QStash messages per agent per day (issue 20): a simulated day of cron invocations, one a minute
 * on a fake clock, against the strict QStash fake (which charges every delivery attempt, as Upstash
 * bills them), with the app served on loopback so every message QStash delivers is handled for
 * real and may publish more. The composition is the Worker's (wireDeps with the monitored QStash
 * scheduler, the simulator provider, the rules policy), on an in-memory database. Between two
 * invocations the clock steps from one due message to the next, so debounced runs and wakes are
 * delivered at their time. Counted after a warm-up half hour (the first sight of the fleet is a
 * one-off run): the fake's charged messages (publishes that enqueued, each retry, callbacks). The
 * days are simulated side by side (each its own database, fake and clock), which changes no count.
 * Run alone: `tsx bench/qstash-messages.bench.ts [--write]`, or via `npm run bench`.
 */
import { serve } from "@hono/node-server";
import { createClient } from "@libsql/client";
import type { AddressInfo } from "node:net";
import { readFileSync, writeFileSync } from "node:fs";
import { openDatabase } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { buildApp } from "../functions/app.ts";
import { wireDeps } from "../functions/host/wire-deps.ts";
import { createAgent, DEFAULT_AGENT, ensureAgent, listRuns, qstashSchedulerFromConfig } from "../pipeline/index.ts";
import { SimulatorProvider } from "../fleet/providers/simulator.ts";
import { injectSimulatorFailure } from "../fleet/providers/simulator-reports.ts";
import { runScheduledTick } from "../jobs/scheduled-tick.ts";
import { fanOutTick } from "../jobs/tick.ts";
import type { Deps } from "../jobs/deps.ts";
import { FakeClock } from "../test/support/fake-clock.ts";
import { parseConfig } from "../runtime/config.ts";
import { silentLogger } from "../test/support/silent-logger.ts";
import { startFakeQStash, TEST_PUBLIC_URL, type FakeQStash } from "../test/qstash/fake-qstash.ts";
import { qstashVars } from "../test/qstash/qstash-deps.ts";
import { startReceiver } from "../test/notify/receiver.ts";
import { table, type Row } from "./harness.ts";

const HEADING = "## QStash messages per day (bench/qstash-messages.bench.ts)";
const MINUTE = 60_000;
const DAY_MINUTES = 1440;
/** Minutes simulated before the day that is counted. */
const WARM_UP_MINUTES = 30;
const DAY_START = Date.UTC(2026, 11, 1);
/** Upstash's free plan: messages (delivery attempts) per day. */
const FREE_PLAN = 1000;

interface Day {
  label: string;
  agents: number;
  vars?: Record<string, string>;
  /** `before`: every agent's tick published each minute (the fan-out this replaced). */
  cron: "scheduled" | "before";
  /** Minute → what happens then (an incident). */
  script?: Record<number, (deps: Deps) => Promise<unknown>>;
}

interface DayResult {
  day: Day;
  messages: number;
  byType: Record<string, number>;
  runs: number;
}

/** Delivers every message due up to `until`, stepping the clock to each; bounded. */
export async function deliverUntil(fake: FakeQStash, clock: FakeClock, until: number): Promise<void> {
  for (let step = 0; step < 10_000; step++) {
    const due = fake.messages.filter((m) => m.state === "pending").map((m) => m.nextAttemptAt);
    const next = Math.min(...due);
    if (!(next <= until)) {
      clock.set(until);
      return;
    }
    clock.set(Math.max(clock.now(), next));
    await fake.deliverDue();
  }
  throw new Error("messages kept falling due: something re-publishes itself");
}

async function simulateDay(day: Day): Promise<DayResult> {
  const clock = new FakeClock(DAY_START - WARM_UP_MINUTES * MINUTE);
  const fake = await startFakeQStash({ now: () => clock.now() });
  const ntfy = await startReceiver("/alerts", 200, "ntfy");
  const config = parseConfig(
    {
      ADMIN_TOKEN: "bench-admin-token-0123456789",
      DATABASE_URL: ":memory:",
      ...qstashVars(fake),
      SIMULATOR_INSTANCES: "4",
      SIMULATOR_FAILURE_RATE: "0",
      NTFY_URL: ntfy.url,
      ...day.vars,
    },
    "node",
  );
  const db = openDatabase(createClient({ url: ":memory:" }));
  await applyMigrations(db);
  const deps = wireDeps({ db, clock, config, scheduler: qstashSchedulerFromConfig(config), log: silentLogger });
  await ensureAgent(db, DEFAULT_AGENT, clock.now());
  for (let i = 1; i < day.agents; i++) await createAgent(db, { id: `agent-${i}`, settings: {} }, clock.now());
  if (deps.provider instanceof SimulatorProvider) await deps.provider.seed(config.simulator.instances);
  const server = serve({ fetch: buildApp(() => deps).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((listening) => server.once("listening", listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.route = (destination) => destination.replace(TEST_PUBLIC_URL, url);
  const agentIds = [DEFAULT_AGENT, ...Array.from({ length: day.agents - 1 }, (_, i) => `agent-${i + 1}`)];
  const runCount = async () =>
    (await Promise.all(agentIds.map((id) => listRuns(deps, id, 10_000)))).reduce((n, runs) => n + runs.length, 0);
  try {
    let chargedBefore = 0;
    let runsBefore = 0;
    for (let minute = -WARM_UP_MINUTES; minute < DAY_MINUTES; minute++) {
      const at = DAY_START + minute * MINUTE;
      clock.set(at);
      if (minute === 0) [chargedBefore, runsBefore] = [fake.quota.charged, await runCount()];
      await day.script?.[minute]?.(deps);
      if (day.cron === "before") await fanOutTick(deps);
      else await runScheduledTick(deps);
      await deliverUntil(fake, clock, at + MINUTE - 1);
    }
    const byType: Record<string, number> = {};
    for (const m of fake.messages.filter((m) => m.createdAt >= DAY_START)) {
      const type = (JSON.parse(m.body) as { type?: string }).type ?? "callback";
      byType[type] = (byType[type] ?? 0) + Math.max(1, m.attempts.length);
    }
    return { day, messages: fake.quota.charged - chargedBefore, byType, runs: (await runCount()) - runsBefore };
  } finally {
    await new Promise((closed) => server.close(() => closed(undefined)));
    await fake.close();
    await ntfy.close();
  }
}

/** sim-1 exits at 10:00: every agent hears it (they share the simulated account). */
const INCIDENT = { 600: (deps: Deps) => injectSimulatorFailure(deps, "sim-1", "exit") };

const DAYS: Day[] = [
  { label: "1 idle agent, before: a tick delivery per agent per minute", agents: 1, cron: "before" },
  { label: "5 idle agents, scheduled tick (CRON_INLINE_AGENTS=5)", agents: 5, cron: "scheduled" },
  {
    label: "6 idle agents, CRON_INLINE_AGENTS=3, RECONCILE_INTERVAL_S=1800: the 3 past the budget fanned out when due",
    agents: 6,
    cron: "scheduled",
    vars: { CRON_INLINE_AGENTS: "3", RECONCILE_INTERVAL_S: "1800" },
  },
  {
    label: "1 agent, one incident (sim-1 exits at 10:00; the rules policy restarts it and re-checks)",
    agents: 1,
    cron: "scheduled",
    script: INCIDENT,
  },
];

function describeTypes(result: DayResult): string {
  return Object.entries(result.byType)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, n]) => `${type} ${n}`)
    .join(", ");
}

function describeDay(result: DayResult, baseline: DayResult): Row {
  const perAgent = result.messages / result.day.agents;
  const types = describeTypes(result);
  return {
    benchmark: "QStash messages in a simulated day (1,440 cron invocations, fake clock)",
    variant: result.day.label,
    result: `${result.messages} messages (${perAgent.toFixed(1)} per agent${types ? `: ${types}` : ""}) · ${result.runs} runs · ${((result.messages / FREE_PLAN) * 100).toFixed(1)}% of the free plan`,
    ratio: `${(perAgent / (baseline.messages / baseline.day.agents)).toFixed(3)}× per agent`,
  };
}

export async function qstashMessagesBench(): Promise<{ rows: Row[]; section: string }> {
  const results = await Promise.all(DAYS.map(simulateDay));
  const rows = results.map((r) => describeDay(r, results[0]!));
  const [before, idle, pastBudget, incident] = results as [DayResult, DayResult, DayResult, DayResult];
  const section = `${HEADING}

Written by \`tsx bench/qstash-messages.bench.ts --write\` (${new Date().toISOString().slice(0, 10)}): a simulated day of one cron
invocation per minute on a fake clock against the strict QStash fake (every delivery attempt
charged, as Upstash bills them), the Worker's composition (monitored QStash scheduler, simulator
of 4 instances, rules policy, one ntfy channel), messages delivered to the app over loopback at
their due time. Ratio: messages per agent against the fan-out this replaced.

${table(rows)}

An idle agent within CRON_INLINE_AGENTS costs **${idle.messages / idle.day.agents} messages a day** (was ${before.messages}); five idle agents use
${idle.messages} of the free plan's ${FREE_PLAN}. One incident costs **${incident.messages} messages** (${describeTypes(incident)}:
the reported exit's run, the restart's re-check wake and the run it asks for). An agent past the inline budget
costs one tick delivery each time it has something due: ${(pastBudget.messages / (pastBudget.day.agents - Number(pastBudget.day.vars!.CRON_INLINE_AGENTS))).toFixed(0)} a day each here, with reconciliation
every 30 minutes (with the default RECONCILE_INTERVAL_S=60 it is due every minute: 1,440 a day).
`;
  return { rows, section };
}

// Like bench/scale.bench.ts: the table goes to stdout; `--write` also updates RESULTS.md.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { section } = await qstashMessagesBench();
  console.log(section);
  if (process.argv.includes("--write")) writeSection(section);
}

/** Replaces this bench's section of bench/RESULTS.md (appending it the first time). */
export function writeSection(section: string): void {
  const path = new URL("./RESULTS.md", import.meta.url);
  const current = readFileSync(path, "utf8");
  const start = current.indexOf(HEADING);
  if (start < 0) return writeFileSync(path, `${current.trimEnd()}\n\n${section.trimEnd()}\n`);
  const next = current.indexOf("\n## ", start + HEADING.length);
  writeFileSync(path, `${current.slice(0, start)}${section.trimEnd()}\n${next < 0 ? "" : current.slice(next)}`);
}
