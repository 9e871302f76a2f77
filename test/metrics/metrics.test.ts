/**
 * GET /metrics (jobs/metrics/metrics.ts): the Prometheus text format as Prometheus parses it
 * (parse-prometheus-text-format, ported from the Python client's parser and matching prom2json's
 * output), every family the issue names with values that follow the database, and who may read
 * it: a viewer's token, METRICS_TOKEN (which opens nothing else), nobody without a token.
 */
import { readFileSync } from "node:fs";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { actions, approvals, instances, notificationDeliveries, notifications, runs, watchdogConditions } from "../../schema/index.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";

const METRICS_TOKEN = "scrape-token-0123456789";

type Parsed = {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string }[];
}[];

async function scrape(deps: TestDeps, token = METRICS_TOKEN) {
  const res = await buildApp(() => deps).request("/metrics", { headers: { Authorization: `Bearer ${token}` } });
  return { res, text: await res.text() };
}

function value(parsed: Parsed, name: string, labels: Record<string, string>): number | undefined {
  const family = parsed.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.value === undefined ? undefined : Number(sample.value);
}

async function busyAgent() {
  const deps = await createTestDeps({ vars: { METRICS_TOKEN } });
  const now = deps.clock.now();
  const live = { agentId: "default", stateAt: now, lastSeenAt: now, updatedAt: now };
  await deps.db.insert(instances).values([
    { ...live, id: "a", state: "running", pricePerHour: 2 },
    { ...live, id: "b", state: "running", pricePerHour: 1.5 },
    { ...live, id: "c", state: "stopped", pricePerHour: 3, storagePerHour: 0.25 },
    { ...live, id: "d", state: "running", pricePerHour: 9, goneAt: now },
  ]);
  await deps.db.insert(runs).values([
    {
      agentId: "default",
      runId: 1,
      status: "succeeded",
      decider: "llm",
      sessionEpoch: 1,
      promptTokens: 1000,
      completionTokens: 50,
      startedAt: now - 4000,
      finishedAt: now,
    },
    {
      agentId: "default",
      runId: 2,
      status: "succeeded",
      decider: "llm",
      sessionEpoch: 1,
      promptTokens: 500,
      completionTokens: 20,
      startedAt: now - 90_000,
      finishedAt: now,
    },
    { agentId: "default", runId: 3, status: "failed", decider: "rules", sessionEpoch: 1, startedAt: now - 1000, finishedAt: now },
  ]);
  const action = (i: number, kind: string, status: string) => ({
    agentId: "default",
    instanceId: "a",
    kind,
    status,
    decidedBy: "rules",
    idempotencyKey: `k${i}`,
    createdAt: now,
  });
  await deps.db
    .insert(actions)
    .values([action(1, "stop", "succeeded"), action(2, "stop", "succeeded"), action(3, "destroy", "awaiting_approval")]);
  await deps.db
    .insert(approvals)
    .values({ agentId: "default", kind: "destroy", instanceId: "a", reason: "r", requestedBy: "rules", createdAt: now });
  await deps.db.insert(watchdogConditions).values({ agentId: "default", kind: "runs_failing", since: now, detail: "x" });
  const [n] = await deps.db
    .insert(notifications)
    .values({ agentId: "default", title: "t", body: "b", severity: "info", dedupKey: "d", createdAt: now })
    .returning();
  await deps.db.insert(notificationDeliveries).values([
    { notificationId: n!.id, channel: "slack", status: "delivered" },
    { notificationId: n!.id, channel: "ntfy", status: "failed" },
  ]);
  return deps;
}

describe("GET /metrics", () => {
  it("is the Prometheus text format, with every family following the database", async () => {
    const deps = await busyAgent();
    const { res, text } = await scrape(deps);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const parsed = parsePrometheusTextFormat(text) as Parsed;
    const at = (name: string, labels: Record<string, string> = {}) => value(parsed, name, { agent: "default", ...labels });

    expect(at("fleetwarden_instances", { state: "running" })).toBe(2);
    expect(at("fleetwarden_instances", { state: "stopped" })).toBe(1);
    // Two running ($2 + $1.5) and the stopped one's storage; the gone one costs nothing.
    expect(at("fleetwarden_burn_usd_per_hour")).toBe(3.75);
    expect(at("fleetwarden_spend_today_usd")).toBeGreaterThanOrEqual(0);
    expect(at("fleetwarden_runs_total", { status: "succeeded", decider: "llm" })).toBe(2);
    expect(at("fleetwarden_runs_total", { status: "failed", decider: "rules" })).toBe(1);
    expect(at("fleetwarden_llm_prompt_tokens_total")).toBe(1500);
    expect(at("fleetwarden_llm_completion_tokens_total")).toBe(70);
    expect(at("fleetwarden_actions_total", { kind: "stop", status: "succeeded" })).toBe(2);
    expect(at("fleetwarden_actions_total", { kind: "destroy", status: "awaiting_approval" })).toBe(1);
    expect(at("fleetwarden_pending_approvals")).toBe(1);
    expect(at("fleetwarden_watchdog_conditions", { kind: "runs_failing" })).toBe(1);
    expect(at("fleetwarden_notifications_total", { channel: "slack", outcome: "delivered" })).toBe(1);
    expect(at("fleetwarden_notifications_total", { channel: "ntfy", outcome: "failed" })).toBe(1);
    expect(value(parsed, "fleetwarden_scheduler_backlog_due", {})).toBe(0);

    const histogram = parsed.find((f) => f.name === "fleetwarden_run_duration_seconds")!;
    expect(histogram.type).toBe("HISTOGRAM");
    // The parser keeps a histogram's buckets, not its labels: one agent, one histogram.
    expect(histogram.metrics).toHaveLength(1);
    expect(text).toContain('fleetwarden_run_duration_seconds_count{agent="default"} 3');
    const runsOfDefault = histogram.metrics[0]!;
    expect(text).toMatch(/^fleetwarden_run_duration_seconds_sum\{agent="default"\} 95(\.\d+)?$/m);
    // 1 s and 4 s runs are within 5 s; the 90 s one only from the 120 s bucket on.
    expect(runsOfDefault.buckets).toMatchObject({ "1": "1", "5": "2", "60": "2", "120": "3", "600": "3", "+Inf": "3" });
  });

  it("counts grow with the database: a new run and action are in the next scrape", async () => {
    const deps = await busyAgent();
    const before = parsePrometheusTextFormat((await scrape(deps)).text) as Parsed;
    const now = deps.clock.now();
    await deps.db
      .insert(runs)
      .values({ agentId: "default", runId: 4, status: "failed", decider: "rules", sessionEpoch: 1, startedAt: now, finishedAt: now });
    const after = parsePrometheusTextFormat((await scrape(deps)).text) as Parsed;
    const failed = (p: Parsed) => value(p, "fleetwarden_runs_total", { agent: "default", status: "failed", decider: "rules" });
    expect([failed(before), failed(after)]).toEqual([1, 2]);
  });

  it("is read with a viewer's token or METRICS_TOKEN, and refused without a token", async () => {
    const deps = await busyAgent();
    const { token: viewerToken } = await createOperator(deps.db, {
      name: "vera",
      role: "viewer",
      createdBy: "admin",
      now: deps.clock.now(),
    });
    expect((await scrape(deps, viewerToken)).res.status).toBe(200);
    expect((await scrape(deps, "wrong-token-0123456789")).res.status).toBe(401);
    const bare = await buildApp(() => deps).request("/metrics");
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ error: expect.stringContaining("Authorization") });
    // METRICS_TOKEN opens /metrics only.
    const api = await buildApp(() => deps).request("/api/agents/default/spend", { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(api.status).toBe(401);
    expect((await buildApp(() => deps).request("/metrics", { headers: authHeaders() })).status).toBe(200);
  });

  it("the Grafana dashboard in docs/ queries only series /metrics serves", async () => {
    const { text } = await scrape(await busyAgent());
    const served = new Set([...text.matchAll(/^# TYPE (\w+) (\w+)$/gm)].map((m) => m[1]!));
    const dashboard = JSON.parse(readFileSync("docs/grafana-dashboard.json", "utf8")) as { panels: { targets: { expr: string }[] }[] };
    const queried = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => [...t.expr.matchAll(/fleetwarden_\w+/g)].map((m) => m[0])));
    expect(queried.length).toBeGreaterThan(10);
    expect(queried.map((name) => name.replace(/_bucket$/, "")).filter((name) => !served.has(name))).toEqual([]);
  });
});
