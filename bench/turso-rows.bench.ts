/**
 * Turso rows per instance per month (issue 37 item 4): Turso bills rows read and rows written
 * (docs.turso.tech/billing-details), so this runs fleetwarden's work for one agent with 10, 100 and
 * 1,000 instances through the Worker's composition (wireDeps with the monitored QStash scheduler,
 * the simulator provider, the rules policy, one ntfy channel) with its database behind the Hrana
 * test server over loopback (what @libsql/client/web sends Turso), which counts every statement's
 * rows as Turso bills them (test/support/turso-rows.ts says what is exact and what estimated).
 *
 * A fake clock drives it minute by minute: each instance reports once a minute (reporter.sh's
 * default FLEETWARDEN_INTERVAL_S=60; the real reporter adds 0–10 % jitter, so this is an upper
 * bound), then one cron invocation (runScheduledTick: reconciliation listing the fleet, heartbeat
 * checks, retention…), then every QStash message due is delivered to the app at its time. After a
 * warm-up (the first listing of the fleet is a one-off), QUIET_MINUTES are counted and scaled to a
 * 30-day month; then one incident (an instance exits; the rules policy restarts it and re-checks)
 * is counted over INCIDENT_MINUTES less the quiet rate, and INCIDENTS_PER_DAY of them are added.
 * Retention deletes nothing in so short a window; in steady state it deletes each pruned row once
 * (events, deliveries, telemetry, history, transcripts, replays), so the rows inserted into those
 * tables are added again as rows written and twice as rows read (found by its subquery, then deleted).
 * Run alone: `tsx bench/turso-rows.bench.ts [--write]`, or via `npm run bench`.
 */
import { serve } from "@hono/node-server";
import { createClient } from "@libsql/client/web";
import type { AddressInfo } from "node:net";
import { openDatabase } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { buildApp } from "../functions/app.ts";
import { wireDeps } from "../functions/host/wire-deps.ts";
import { DEFAULT_AGENT, ensureAgent, qstashSchedulerFromConfig } from "../pipeline/index.ts";
import { SimulatorProvider } from "../fleet/providers/simulator.ts";
import { injectSimulatorFailure } from "../fleet/providers/simulator-reports.ts";
import { runScheduledTick } from "../jobs/scheduled-tick.ts";
import { FakeClock } from "../test/support/fake-clock.ts";
import { parseConfig } from "../runtime/config.ts";
import { silentLogger } from "../test/support/silent-logger.ts";
import { startFakeQStash, TEST_PUBLIC_URL } from "../test/qstash/fake-qstash.ts";
import { qstashVars } from "../test/qstash/qstash-deps.ts";
import { startReceiver } from "../test/notify/receiver.ts";
import { startHranaServer, type HranaServer } from "../test/support/hrana-server.ts";
import { signedWebhook } from "../test/support/signed-webhook.ts";
import { TEST_WEBHOOK_SECRET } from "../test/support/test-deps.ts";
import { deliverUntil } from "./qstash-messages.bench.ts";
import { writeSection } from "./results-file.ts";

export const TURSO_ROWS_HEADING = "## Turso rows per month (bench/turso-rows.bench.ts)";
const MINUTE = 60_000;
const MONTH_MINUTES = 30 * 24 * 60;
const WARM_UP_MINUTES = 5;
const QUIET_MINUTES = 10;
const INCIDENT_MINUTES = 10;
const INCIDENTS_PER_DAY = 3;
const FLEETS = [10, 100, 1000];
const START = Date.UTC(2026, 11, 1, 9);
/** Tables retention prunes (pipeline/retention.ts): each row inserted is deleted once in steady state. */
const PRUNED = /^\s*insert\s+into\s+"?(events|deliveries|instance_telemetry|llm_calls|instance_events|replays)"?[\s(]/i;

/**
 * Turso's plans (turso.tech/pricing, as summarised in api-evangelist/turso
 * plans/turso-plans-pricing.yml at commit 8cd9891eacd5be4230ec27a2b5c4d4e0413db58e, 2026-06-12):
 * monthly price and included rows read, rows written, storage.
 */
export const TURSO_PLANS = [
  { name: "Free", usd: 0, read: 500e6, written: 10e6, storageGb: 5 },
  { name: "Developer", usd: 4.99, read: 2.5e9, written: 25e6, storageGb: 9 },
  { name: "Scaler", usd: 24.92, read: 100e9, written: 100e6, storageGb: 24 },
  { name: "Pro", usd: 416.58, read: 250e9, written: 250e6, storageGb: 50 },
];

interface Rows {
  read: number;
  written: number;
  pruned: number;
}

interface Fleet {
  instances: number;
  quiet: Rows;
  incident: Rows;
  /** Per 30-day month, retention included. */
  month: { read: number; written: number };
  /** The statements that read most, and that wrote most, in the quiet window, with their rows. */
  top: { sql: string; read: number; written: number; statements: number }[];
  topWritten: Fleet["top"];
}

function take(server: HranaServer): Rows & { top: Fleet["top"]; topWritten: Fleet["top"] } {
  const rows: Rows = { read: 0, written: 0, pruned: 0 };
  const top: Fleet["top"] = [];
  for (const [sql, r] of server.rows) {
    rows.read += r.read;
    rows.written += r.written;
    if (PRUNED.test(sql)) rows.pruned += r.written;
    top.push({ sql, ...r });
  }
  server.rows.clear();
  const topWritten = [...top].sort((a, b) => b.written - a.written).slice(0, 4);
  top.sort((a, b) => b.read - a.read);
  return { ...rows, top: top.slice(0, 3), topWritten };
}

async function simulateFleet(instances: number): Promise<Fleet> {
  const server = await startHranaServer();
  const clock = new FakeClock(START - WARM_UP_MINUTES * MINUTE);
  const fake = await startFakeQStash({ now: () => clock.now() });
  const ntfy = await startReceiver("/alerts", 200, "ntfy");
  const config = parseConfig(
    {
      ADMIN_TOKEN: "bench-admin-token-0123456789",
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      DATABASE_URL: server.url,
      ...qstashVars(fake),
      SIMULATOR_INSTANCES: String(instances),
      SIMULATOR_FAILURE_RATE: "0",
      NTFY_URL: ntfy.url,
    },
    "node",
  );
  const client = createClient({ url: server.url });
  const db = openDatabase(client);
  await applyMigrations(db);
  const deps = wireDeps({ db, clock, config, scheduler: qstashSchedulerFromConfig(config), log: silentLogger });
  await ensureAgent(db, DEFAULT_AGENT, clock.now());
  if (deps.provider instanceof SimulatorProvider) await deps.provider.seed(instances);
  const app = buildApp(() => deps);
  const http = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((listening) => http.once("listening", listening));
  fake.route = (destination) => destination.replace(TEST_PUBLIC_URL, `http://127.0.0.1:${(http.address() as AddressInfo).port}`);
  let n = 0;
  const minute = async (at: number, script?: () => Promise<unknown>) => {
    clock.set(at);
    for (let i = 0; i < instances; i += 50) {
      const ids = Array.from({ length: Math.min(50, instances - i) }, (_, k) => `sim-${i + k + 1}`);
      await Promise.all(
        ids.map((instanceId) =>
          app.request(
            "/webhooks/default/instances",
            signedWebhook(`report-${n++}`, { instanceId, state: "running", gpuUtil: 80 + (n % 7), message: "training" }),
          ),
        ),
      );
    }
    await script?.();
    await runScheduledTick(deps);
    await deliverUntil(fake, clock, at + MINUTE - 1);
  };
  try {
    for (let m = -WARM_UP_MINUTES; m < 0; m++) await minute(START + m * MINUTE);
    server.rows.clear();
    for (let m = 0; m < QUIET_MINUTES; m++) await minute(START + m * MINUTE);
    const { top, topWritten, ...quiet } = take(server);
    for (let m = 0; m < INCIDENT_MINUTES; m++) {
      const at = START + (QUIET_MINUTES + m) * MINUTE;
      await minute(at, m === 0 ? () => injectSimulatorFailure(deps, "sim-1", "exit") : undefined);
    }
    const during = take(server);
    const share = INCIDENT_MINUTES / QUIET_MINUTES;
    const incident: Rows = {
      read: Math.max(0, during.read - quiet.read * share),
      written: Math.max(0, during.written - quiet.written * share),
      pruned: Math.max(0, during.pruned - quiet.pruned * share),
    };
    const perMonth = (key: keyof Rows) => (quiet[key] * MONTH_MINUTES) / QUIET_MINUTES + incident[key] * INCIDENTS_PER_DAY * 30;
    const pruned = perMonth("pruned");
    return {
      instances,
      quiet,
      incident,
      month: { read: perMonth("read") + 2 * pruned, written: perMonth("written") + pruned },
      top,
      topWritten,
    };
  } finally {
    await new Promise((closed) => http.close(() => closed(undefined)));
    client.close();
    await fake.close();
    await ntfy.close();
    await server.close();
  }
}

/** The cheapest plan whose included rows cover the month (storage is checked separately). */
export function planFor(month: { read: number; written: number }): string {
  const plan = TURSO_PLANS.find((p) => month.read <= p.read && month.written <= p.written);
  return plan ? `${plan.name}${plan.usd ? ` ($${plan.usd}/month)` : ""}` : "past Pro: Enterprise or overage";
}

const fmt = (rows: number) =>
  rows >= 1e9
    ? `${(rows / 1e9).toFixed(2)} B`
    : rows >= 1e6
      ? `${(rows / 1e6).toFixed(1)} M`
      : rows >= 1e3
        ? `${(rows / 1e3).toFixed(1)} k`
        : rows.toFixed(0);

export async function tursoRowsBench(): Promise<string> {
  const fleets: Fleet[] = [];
  for (const instances of FLEETS) fleets.push(await simulateFleet(instances));
  const lines = fleets.map(
    (f) =>
      `| ${f.instances.toLocaleString("en")} | ${fmt(f.month.read / f.instances)} | ${fmt(f.month.written / f.instances)} | ${fmt(f.month.read)} | ${fmt(f.month.written)} | ${fmt(f.incident.read)} / ${fmt(f.incident.written)} | ${planFor(f.month)} |`,
  );
  const largest = fleets.at(-1)!;
  const list = (rows: Fleet["top"], key: "read" | "written") =>
    rows
      .map(
        (t) =>
          `- ${fmt((t[key] * MONTH_MINUTES) / QUIET_MINUTES)} rows ${key} a month (${t.statements} statements in ${QUIET_MINUTES} min): \`${t.sql.replace(/\s+/g, " ").slice(0, 140)}…\``,
      )
      .join("\n");
  return `${TURSO_ROWS_HEADING}

Written by \`tsx bench/turso-rows.bench.ts --write\` (${new Date().toISOString().slice(0, 10)}): one agent, the Worker's composition
(QStash scheduler against the strict fake, simulator provider, rules policy, ntfy), its database
behind the Hrana test server, which counts each statement's rows as Turso bills them
(test/support/turso-rows.ts: rows written exact; rows read exact for full scans, index lookups
counted as the rows they return or change, so reads are a lower bound). Each instance reports once a
minute (reporter.sh's default), one cron invocation a minute, QStash messages delivered at their
time. ${QUIET_MINUTES} quiet minutes after a ${WARM_UP_MINUTES}-minute warm-up, scaled to a 30-day month, plus
${INCIDENTS_PER_DAY} incidents a day (sim-1 exits; the rules policy restarts it; measured over ${INCIDENT_MINUTES} minutes less the
quiet rate), plus retention in steady state (every row inserted into a pruned table deleted once:
one more row written, two read). Plans: turso.tech/pricing (Free 500 M read / 10 M written / 5 GB;
Developer $4.99: 2.5 B / 25 M / 9 GB; Scaler $24.92: 100 B / 100 M / 24 GB; Pro $416.58: 250 B / 250 M / 50 GB).

| instances | read / instance / month | written / instance / month | read / month | written / month | one incident (read / written) | plan the rows need |
|---|---|---|---|---|---|---|
${lines.join("\n")}

The statements that read most at ${largest.instances.toLocaleString("en")} instances (quiet window, scaled to a month, before retention):

${list(largest.top, "read")}

and that wrote most:

${list(largest.topWritten, "written")}
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await tursoRowsBench();
  console.log(section);
  if (process.argv.includes("--write")) writeSection(TURSO_ROWS_HEADING, section, "## Scale");
}
