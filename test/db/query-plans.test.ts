/**
 * Every query on the hot paths uses an index. The real flows — webhook and chat ingest, claim,
 * finish, reconciliation, heartbeats, the economics check and the spend report, and the dashboard's lists (fleet, runs, notifications) —
 * run against a client that records each statement; each recorded statement is then explained
 * (`EXPLAIN QUERY PLAN`, same arguments) and the test fails on a full scan of a table that grows
 * with history, or on a bound JSON array scanned once per row of another table (n × m: at 1,000
 * instances the telemetry update did that and held the event loop 380 ms a tick). A missing index
 * makes a per-event cost grow with the history, so this is where it shows first.
 */
import { describe, expect, it } from "vitest";
import { createClient, type Client, type InStatement } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { buildApp } from "../../functions/app.ts";
import { flagSilentInstances, reconcileFleet, runEconomics } from "../support/one-check.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { advance } from "../support/drive.ts";
import { pruneOldRecords } from "../../pipeline/index.ts";
import { instances } from "../../schema/index.ts";
import { loadOverview } from "../../jobs/read-models/overview.ts";
import { activityByHour, promptTokensPerRun, runsByHour } from "../../jobs/read-models/charts.ts";

/** Tables whose row count grows with history (events, runs, messages…), not with fleet size. */
const GROWING = new Set([
  "events",
  "instance_events",
  "runs",
  "wakes",
  "messages",
  "notifications",
  "notification_deliveries",
  "deliveries",
  "actions",
  "approvals",
  "accepted_signatures",
  "instance_spend",
  "once_notices",
  "llm_calls",
  "replays",
]);

/**
 * Lists allowed to sort an agent's whole history, each waiting for its index (none now: migration
 * 0005 added `actions (agent_id, id)`, `approvals (agent_id, id)` and `wakes (agent_id, created_by_run)`).
 */
const KNOWN_UNINDEXED: RegExp[] = [];

interface Recorded {
  flow: string;
  stmt: { sql: string; args: unknown };
}

/** A real libSQL client that remembers every statement sent through execute and batch. */
function recordingClient(inner: Client, sink: Recorded[], flow: { name: string }): Client {
  const remember = (s: InStatement) => {
    const stmt = typeof s === "string" ? { sql: s, args: [] } : { sql: s.sql, args: s.args ?? [] };
    sink.push({ flow: flow.name, stmt });
  };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "execute") {
        return (s: InStatement, args?: unknown) => {
          remember(typeof s === "string" && args ? { sql: s, args: args as never } : s);
          return target.execute(s as never, args as never);
        };
      }
      if (prop === "batch") {
        return (stmts: InStatement[], mode?: never) => {
          stmts.forEach(remember);
          return target.batch(stmts, mode);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Plan lines that read a growing table in proportion to its history: a SCAN (plain or through an
 * index), a SEARCH keyed only by the agent (its whole history) unless it walks an index in order
 * and stops at a LIMIT, or a SEARCH keyed by agent and status for a status that only grows
 * (consumed, delivered…) rather than the small pending set.
 */
function historyScans(sqlText: string, args: unknown, plan: { detail: string }[], aliases: Map<string, string>): string[] {
  const details = plan.map((row) => row.detail);
  const sortsEverything = details.some((d) => d.includes("TEMP B-TREE"));
  const limited = /\blimit\b/i.test(sqlText);
  const onlyPending = /'pending'/.test(sqlText) || (Array.isArray(args) && args.includes("pending"));
  return details.filter((detail) => {
    const match = /^(SCAN|SEARCH) (\w+)(?:.*\((.*)\))?/.exec(detail);
    if (!match) return false;
    const table = aliases.get(match[2]!) ?? match[2]!;
    if (!GROWING.has(table)) return false;
    if (match[1] === "SCAN") return true;
    const keys = (match[3] ?? "").split(" AND ").map((k) => k.replace(/[=<>].*$/, ""));
    if (keys.length === 1 && keys[0] === "agent_id") return !(limited && !sortsEverything);
    // One status of one agent walked in id order (an index's entries end with the rowid) and cut
    // at a LIMIT reads a page, however long the history of that status.
    if (keys.length === 2 && keys[0] === "agent_id" && keys[1] === "status") return !onlyPending && !(limited && !sortsEverything);
    return false;
  });
}

/**
 * Plan lines that scan a bound JSON array (json_each) once per row of another table: a nested
 * loop with the array inside, n × m (a fleet's samples against the fleet's instances). EXPLAIN
 * QUERY PLAN lists a join's loops outer first, so it is a json_each scan that comes after another
 * loop of the same parent; the array as the outer loop, with a key lookup inside, is fine.
 */
function arrayInnerLoops(plan: { id: number; parent: number; detail: string }[]): string[] {
  return plan
    .filter((row, i) => {
      if (!/^SCAN json_each/.test(row.detail)) return false;
      return plan.slice(0, i).some((before) => before.parent === row.parent && /^(SCAN|SEARCH) (?!json_each)/.test(before.detail));
    })
    .map((row) => `${row.detail} inside another loop`);
}

/** `from events e`, `join runs r` … → alias → table, so plan lines naming an alias are checked too. */
function aliasesOf(sqlText: string): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const m of sqlText.matchAll(/(?:from|join|update|into)\s+"?(\w+)"?\s+(?:as\s+)?"?(\w+)"?/gi)) {
    aliases.set(m[2]!, m[1]!);
  }
  return aliases;
}

describe("query plans of the hot paths", () => {
  it("ingest, claim, finish, reconcile, heartbeats and the dashboard's lists never scan a growing table", async () => {
    const recorded: Recorded[] = [];
    const flow = { name: "setup" };
    const inner = createClient({ url: ":memory:" });
    const db = openDatabase(recordingClient(inner, recorded, flow));
    await applyMigrations(db);
    const base = await createTestDeps({ db, vars: { SIMULATOR_FAILURE_RATE: "0", RECONCILE_INTERVAL_S: "60" } });
    const provider = new SimulatorProvider(db, base.clock);
    await provider.seed(3);
    const deps = { ...base, provider };
    const app = buildApp(() => deps);

    flow.name = "reconcile";
    await reconcileFleet(deps, "default");
    await provider.injectFailure("sim-2", "exit");
    await provider.destroy("sim-3");
    deps.clock.advance(61_000);
    await reconcileFleet(deps, "default");

    flow.name = "webhook ingest";
    for (const [i, state] of ["exited", "running", "running"].entries()) {
      const res = await app.request("/webhooks/default/instances", signedWebhook(`msg_${i}`, { instanceId: "sim-1", state }));
      expect(res.status).toBe(202);
    }
    expect(
      (await app.request("/webhooks/default/instances", signedWebhook("msg_0", { instanceId: "sim-1", state: "exited" }))).status,
    ).toBe(200);

    flow.name = "chat ingest";
    const chat = await app.request("/api/agents/default/messages", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ text: "status?" }),
    });
    expect(chat.status).toBe(202);

    flow.name = "claim and finish";
    expect(await advance(deps, 10_000)).toContain("succeeded");

    flow.name = "heartbeat";
    deps.clock.advance(3_600_000);
    await flagSilentInstances(deps, "default");

    flow.name = "economics";
    await db.update(instances).set({
      pricePerHour: 1,
      storagePerHour: 0.1,
      spendAccruedAt: deps.clock.now() - 60_000,
      gpuUtil: 0,
      gpuUtilAt: deps.clock.now(),
      idleSince: deps.clock.now() - 3_600_000,
      endsAt: deps.clock.now() + 60_000,
    });
    await runEconomics(deps, "default");
    await runEconomics(deps, "default");
    await app.request("/api/agents/default/spend", { headers: authHeaders() });

    flow.name = "dashboard lists";
    await notifyHuman(deps, { agentId: "default", runId: 1, title: "sim-2 exited", body: "exit code 1", severity: "warning" });
    for (const path of [
      "instances",
      "instances/sim-1/events?limit=20",
      "runs?limit=20",
      "notifications?limit=20",
      "wakes",
      "memory",
      "runs/1/llm-calls",
      "",
    ]) {
      const res = await app.request(`/api/agents/default${path ? `/${path}` : ""}`, { headers: authHeaders() });
      expect(res.status).toBe(200);
    }

    // Issue 26: every route that lists history, each status filter, and the overview's charts.
    flow.name = "history lists";
    for (const path of [
      "events",
      "events?status=consumed",
      "events?status=pending",
      "events?status=dropped",
      "wakes?status=consumed",
      "wakes?status=pending",
      "actions",
      "approvals",
      "approvals?status=pending",
      "approvals?status=rejected",
      "blocks",
      "conversation",
      "health",
      "runs/1",
    ]) {
      const res = await app.request(`/api/agents/default/${path}`, { headers: authHeaders() });
      expect(res.status, path).toBe(200);
    }
    await loadOverview(deps, "default");
    await runsByHour(deps, "default");
    await promptTokensPerRun(deps, "default");
    await activityByHour(deps, "default");

    flow.name = "retention";
    await pruneOldRecords(deps);

    const checked = recorded.filter((r) => r.flow !== "setup" && /^\s*(select|insert|update|delete|with)\b/i.test(r.stmt.sql));
    expect(new Set(checked.map((r) => r.flow))).toEqual(
      new Set([
        "reconcile",
        "webhook ingest",
        "chat ingest",
        "claim and finish",
        "heartbeat",
        "economics",
        "dashboard lists",
        "history lists",
        "retention",
      ]),
    );
    const offenders: string[] = [];
    const known: string[] = [];
    const seen = new Set<string>();
    for (const { flow: name, stmt } of checked) {
      if (seen.has(stmt.sql)) continue;
      seen.add(stmt.sql);
      const plan = await inner.execute({ sql: `EXPLAIN QUERY PLAN ${stmt.sql}`, args: stmt.args as never });
      const rows = plan.rows as unknown as { id: number; parent: number; detail: string }[];
      const scans = [...historyScans(stmt.sql, stmt.args, rows, aliasesOf(stmt.sql)), ...arrayInnerLoops(rows)];
      if (!scans.length) continue;
      const line = `[${name}] ${scans.join("; ")}\n    ${stmt.sql.replace(/\s+/g, " ").slice(0, 300)}`;
      (KNOWN_UNINDEXED.some((k) => k.test(stmt.sql)) ? known : offenders).push(line);
    }
    expect(offenders, offenders.join("\n")).toEqual([]);
    // Each known exception still happens (delete its entry once its index exists).
    expect(known).toHaveLength(KNOWN_UNINDEXED.length);
  });
});
