/**
 * The host-agnostic driver of the shared scenario suite: one interface over a running host (the
 * Node host, or the built Worker in workerd) reached only over HTTP, with QStash played by the
 * strict fake that delivers back to the host, the scripted LLM, and direct access to the host's
 * database for what the scenarios set up "from outside" (the provider's side of the simulator, a
 * claim by an isolate that then died). The same scenarios run against both hosts.
 */
import type { Db } from "../../db/client.ts";
import { TEST_PUBLIC_URL, TEST_QSTASH_TOKEN, type FakeQStash } from "../qstash/fake-qstash.ts";
import type { ScriptedLlm } from "../support/scripted-llm.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { TEST_VAST_SECRET, vastDelivery } from "../support/vast-webhook.ts";

/** Variables both hosts get (besides their database, scheduler and LLM addresses). */
export const SCENARIO_VARS = {
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
  VAST_WEBHOOK_SECRET: TEST_VAST_SECRET,
  DEBOUNCE_HUMAN_MS: "0",
  DEBOUNCE_STATE_MS: "0",
  SIMULATOR_INSTANCES: "3",
  // Channel receivers listen on loopback (test/notify/receiver.ts): a local setup.
  ALLOW_PRIVATE_URLS: "true",
  SIMULATOR_FAILURE_RATE: "0",
  RECONCILE_INTERVAL_S: "1",
  LLM_MAX_RETRIES: "0",
  LLM_TIMEOUT_MS: "10000",
  AGENT_MODEL: "scripted-model",
  // Real time: a scheduled re-check must come due within the scenario (the floor is its own test).
  WAKE_MIN_DELAY_S: "0",
  // Real time: an instance at 0 % is told about within the economics scenario.
  IDLE_NOTIFY_AFTER_S: "1",
};

/** What one invocation of the host cost in outside calls (the Worker's subrequests). */
export interface InvocationCost {
  label: string;
  db: number;
  qstash: number;
  llm: number;
}

export interface ScenarioHost {
  name: "node" | "worker";
  baseUrl: string;
  qstash: FakeQStash;
  llm: ScriptedLlm;
  /** The host's database, opened from outside (a file client on Node, Hrana over HTTP for the Worker). */
  db: Db;
  /** Database round trips the host made so far (Node: client calls; Worker: Hrana requests). */
  dbRequests(): number;
  /** Every invocation measured so far. */
  costs: InvocationCost[];
  /** One scheduled tick as the host's own scheduler runs it (Worker: its cron trigger; Node: its interval's tick). */
  runScheduled(): Promise<void>;
  close(): Promise<void>;
}

export type StartHost = () => Promise<ScenarioHost>;

/** Runs one invocation of the host and records what it cost. */
async function measured<T>(host: ScenarioHost, label: string, call: () => Promise<T>): Promise<T> {
  const before = { db: host.dbRequests(), qstash: host.qstash.requests.length, llm: host.llm.requests.length };
  const result = await call();
  host.costs.push({
    label,
    db: host.dbRequests() - before.db,
    qstash: host.qstash.requests.length - before.qstash,
    llm: host.llm.requests.length - before.llm,
  });
  return result;
}

export async function api(host: ScenarioHost, method: string, path: string, body?: unknown) {
  const res = await measured(host, `${method} ${path.replace(/\/\d+(?=\/|$)/g, "/:id")}`, () =>
    fetch(`${host.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

let webhookCounter = 0;

/** A signed instance webhook (Standard Webhooks), as an instance would send it. */
export async function instanceWebhook(host: ScenarioHost, body: { instanceId: string; state: string; message?: string; gpuUtil?: number }) {
  const id = `msg_${host.name}_${++webhookCounter}_${Date.now()}`;
  return measured(host, "POST /webhooks/:agent/instances", () =>
    fetch(`${host.baseUrl}/webhooks/default/instances`, signedWebhook(id, body)),
  );
}

/** A Vast.ai notification webhook, signed as the docs say (test/support/vast-webhook.ts). */
export async function vastNotification(host: ScenarioHost, body: Record<string, unknown>, attempt = 1) {
  return measured(host, "POST /webhooks/:agent/vast", () =>
    fetch(`${host.baseUrl}/webhooks/default/vast`, vastDelivery(body, { nowMs: Date.now(), attempt })),
  );
}

/** Lets QStash deliver, one invocation at a time, everything due; bounded. */
export async function deliverAll(host: ScenarioHost): Promise<number> {
  for (let n = 0; n < 100; n++) {
    const delivered = await measured(host, "delivery", () => host.qstash.deliverNext());
    if (!delivered) {
      host.costs.pop(); // nothing was invoked
      return n;
    }
    host.costs[host.costs.length - 1]!.label = `delivery ${(JSON.parse(delivered.body) as { type: string }).type}`;
  }
  throw new Error("QStash kept delivering: something re-publishes itself");
}

/**
 * Delivers until `check` holds (deliveries may be re-published for later: an early wake, a busy
 * lease), polling real time; fails after `limitMs`.
 */
export async function settleUntil<T>(host: ScenarioHost, check: () => Promise<T | undefined | false>, limitMs = 30_000): Promise<T> {
  const give = Date.now() + limitMs;
  for (;;) {
    await deliverAll(host);
    const result = await check();
    if (result) return result;
    if (Date.now() > give) {
      const recent = host.qstash.messages
        .slice(-6)
        .map((m) => `${m.body} ${m.state} attempts=${m.attempts.join(",")} due=${m.nextAttemptAt - Date.now()}ms`);
      throw new Error(`${host.name}: condition not met within ${limitMs} ms; last QStash messages:\n${recent.join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface RunView {
  runId: number;
  status: string;
  noop: boolean;
  decider: string;
  triggers: { source: string; id: number }[];
  wakesConsumed: number[];
  reply: string | null;
}

/** Nothing scheduled, nothing running, nothing waiting. */
export async function idle(host: ScenarioHost) {
  const state = await api(host, "GET", "/api/agents/default");
  return !state.running && state.nextRunAt === null && state.pendingEvents === 0 ? state : undefined;
}

/** The run with this id, once it has finished. */
export async function finished(host: ScenarioHost, runId: number): Promise<RunView | undefined> {
  const run = (await runs(host)).find((r) => r.runId === runId);
  return run && run.status !== "running" ? run : undefined;
}

export async function runs(host: ScenarioHost): Promise<RunView[]> {
  return (await api(host, "GET", "/api/agents/default/runs?limit=100")).runs;
}

export async function lastRunId(host: ScenarioHost): Promise<number> {
  return (await api(host, "GET", "/api/agents/default")).runCounter;
}

/** Runs every agent's tick inline (POST /api/cron). */
export function cron(host: ScenarioHost) {
  return api(host, "POST", "/api/cron");
}

/** One scheduled tick, as the host's cron runs it (jobs/scheduled-tick.ts), measured. */
export function scheduledTick(host: ScenarioHost): Promise<void> {
  return measured(host, "scheduled tick", () => host.runScheduled());
}

/** Has QStash hold a tick delivery for `agentId`, as the scheduled tick's fan-out publishes one. */
export async function publishTick(host: ScenarioHost, agentId: string): Promise<void> {
  const res = await fetch(`${host.qstash.baseUrl}/v2/publish/${TEST_PUBLIC_URL}/internal/deliveries`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TEST_QSTASH_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ type: "tick", agentId }),
  });
  if (res.status !== 201) throw new Error(`QStash refused the tick: ${res.status} ${await res.text()}`);
}

/** Per label: invocations, and the most and mean outside calls one invocation made. */
export function summariseCosts(costs: InvocationCost[]) {
  const byLabel = new Map<string, InvocationCost[]>();
  for (const c of costs) byLabel.set(c.label, [...(byLabel.get(c.label) ?? []), c]);
  return [...byLabel].map(([label, list]) => {
    const total = list.map((c) => c.db + c.qstash + c.llm);
    return {
      label,
      invocations: list.length,
      dbMax: Math.max(...list.map((c) => c.db)),
      qstashMax: Math.max(...list.map((c) => c.qstash)),
      llmMax: Math.max(...list.map((c) => c.llm)),
      subrequestsMax: Math.max(...total),
      subrequestsMean: Math.round((total.reduce((a, b) => a + b, 0) / list.length) * 10) / 10,
    };
  });
}
