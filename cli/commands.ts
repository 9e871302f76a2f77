/**
 * The CLI's commands, one row each: what it calls in the operator API and how a human reads the
 * answer. `--json` prints the API's answer itself, so scripts see what the API documents
 * (docs/api.md). A row says what it needs (`args`) so the runner can refuse a missing one.
 */
import type { Api, Answer } from "./api.ts";
import { EXIT, type ExitCode } from "./exit-codes.ts";
import { ago, table, usd } from "./table.ts";

export interface Context {
  api: Api;
  agent: string;
  options: Record<string, string | true>;
  now: number;
}

export interface Outcome {
  data: unknown;
  human: string;
  code?: ExitCode;
}

export interface Command {
  name: string;
  args: string[];
  summary: string;
  run(ctx: Context, args: string[]): Promise<Outcome>;
}

type Row = Record<string, unknown>;
const rows = (answer: Answer, key: string) => (answer.body[key] ?? []) as Row[];
const enc = encodeURIComponent;
const agentPath = (ctx: Context, rest = "") => `/api/agents/${enc(ctx.agent)}${rest}`;
const note = (ctx: Context) => (typeof ctx.options.note === "string" ? { note: ctx.options.note } : {});
const limit = (ctx: Context) => (typeof ctx.options.limit === "string" ? `?limit=${enc(ctx.options.limit)}` : "");

async function status(ctx: Context): Promise<Outcome> {
  const [agent, health, spend] = await Promise.all([
    ctx.api.call("GET", agentPath(ctx)),
    ctx.api.call("GET", agentPath(ctx, "/health")),
    ctx.api.call("GET", agentPath(ctx, "/spend")),
  ]);
  const a = agent.body;
  const h = health.body as { ok: boolean; conditions: Row[] };
  const today = (spend.body.today ?? {}) as Row;
  const mode = ((a.settings as Row | undefined)?.mode as string | undefined) ?? "act";
  const lines = [
    `agent ${ctx.agent}${a.archived ? " (archived)" : ""}: ${mode === "shadow" ? "paused (shadow mode: proposes, does not act)" : "acting"}`,
    `runs ${a.runCounter}, ${a.running ? "running now" : "idle"}, next run ${a.nextRunAt ? ago(a.nextRunAt, ctx.now) : "not scheduled"}, ${a.pendingEvents} events waiting`,
    `spend today ${usd(today.usd)}${today.limitUsd == null ? "" : ` of ${usd(today.limitUsd)}`}, burning ${usd(today.burnPerHour)}/h (estimated)`,
    h.ok ? "health ok" : `needs attention: ${h.conditions.map((c) => `${c.kind} (${c.detail ?? ago(c.since, ctx.now)})`).join("; ")}`,
  ];
  return { data: { agent: a, health: h, spend: spend.body }, human: lines.join("\n"), code: h.ok ? EXIT.ok : EXIT.attention };
}

async function instances(ctx: Context): Promise<Outcome> {
  const answer = await ctx.api.call("GET", agentPath(ctx, "/instances"));
  const human = table(rows(answer, "instances"), [
    ["ID", (i) => i.id],
    ["STATE", (i) => i.state],
    ["GPU", (i) => (i.gpuName ? `${i.gpuCount ?? 1}× ${i.gpuName}` : null)],
    ["$/H", (i) => usd(i.costPerHour)],
    ["UTIL", (i) => (typeof i.gpuUtil === "number" ? `${Math.round(i.gpuUtil)} %` : null)],
    ["IDLE SINCE", (i) => (i.idleSince ? ago(i.idleSince, ctx.now) : null)],
    ["TODAY", (i) => usd(i.spentTodayUsd)],
    ["LABEL", (i) => i.label],
  ]);
  return { data: answer.body, human };
}

async function spend(ctx: Context): Promise<Outcome> {
  const answer = await ctx.api.call("GET", agentPath(ctx, "/spend"));
  const today = (answer.body.today ?? {}) as Row;
  const head = `today ${usd(today.usd)}${today.limitUsd == null ? " (no daily limit)" : ` of a ${usd(today.limitUsd)} daily limit`}, burning ${usd(today.burnPerHour)}/h`;
  const days = table(rows(answer, "days"), [
    ["DAY", (d) => d.day],
    ["USD", (d) => usd(d.usd)],
  ]);
  const perInstance = table(rows(answer, "instances"), [
    ["INSTANCE", (i) => i.id],
    ["TODAY", (i) => usd(i.usdToday)],
  ]);
  return { data: answer.body, human: `${head} (estimated)\n\n${perInstance}\n\n${days}` };
}

async function runs(ctx: Context): Promise<Outcome> {
  const answer = await ctx.api.call("GET", agentPath(ctx, `/runs${limit(ctx)}`));
  const human = table(rows(answer, "runs"), [
    ["RUN", (r) => r.runId],
    ["STATUS", (r) => r.status],
    ["DECIDER", (r) => r.decider],
    ["STARTED", (r) => ago(r.startedAt, ctx.now)],
    ["TOKENS", (r) => (typeof r.promptTokens === "number" ? `${r.promptTokens}+${r.completionTokens ?? 0}` : null)],
    ["REPLY", (r) => (typeof r.reply === "string" ? r.reply.slice(0, 60) : r.error)],
  ]);
  return { data: answer.body, human };
}

async function approvals(ctx: Context): Promise<Outcome> {
  const wanted = typeof ctx.options.status === "string" ? ctx.options.status : "pending";
  const answer = await ctx.api.call("GET", agentPath(ctx, `/approvals?status=${enc(wanted)}`));
  const human = table(rows(answer, "approvals"), [
    ["ID", (a) => a.id],
    ["KIND", (a) => a.kind],
    ["INSTANCE", (a) => a.instanceId],
    ["STATUS", (a) => a.status],
    ["ASKED BY", (a) => a.requestedByOperator ?? a.requestedBy],
    ["EXPIRES", (a) => ago(a.expiresAt, ctx.now)],
    ["WHY", (a) => (typeof a.reason === "string" ? a.reason.slice(0, 60) : null)],
  ]);
  return { data: answer.body, human };
}

const decide =
  (decision: "approve" | "reject") =>
  async (ctx: Context, [id]: string[]) => {
    const answer = await ctx.api.call("POST", agentPath(ctx, `/approvals/${enc(id!)}`), { decision, ...note(ctx) });
    return { data: answer.body, human: `${decision === "approve" ? "approved" : "rejected"} approval ${id}` };
  };

const act =
  (kind: string) =>
  async (ctx: Context, [id]: string[]) => {
    const answer = await ctx.api.call("POST", agentPath(ctx, `/instances/${enc(id!)}/actions`), { kind, ...note(ctx) });
    if (answer.status === 202) {
      return { data: answer.body, human: `${kind} ${id}: waiting for a human's approval`, code: EXIT.pendingApproval };
    }
    const status = (answer.body.status as string | undefined) ?? "done";
    return { data: answer.body, human: `${kind} ${id}: ${status}` };
  };

const mode = (to: "act" | "shadow") => async (ctx: Context) => {
  const answer = await ctx.api.call("POST", agentPath(ctx, "/mode"), { mode: to });
  const human = to === "shadow" ? `${ctx.agent} paused: it proposes, a human acts` : `${ctx.agent} acting again`;
  return {
    data: answer.body,
    human: answer.body.previous === to ? `${ctx.agent} was already ${to === "act" ? "acting" : "paused"}` : human,
  };
};

async function logs(ctx: Context, [id]: string[]): Promise<Outcome> {
  const answer = await ctx.api.call("GET", agentPath(ctx, `/instances/${enc(id!)}/events${limit(ctx)}`));
  const human = table(rows(answer, "events"), [
    ["AT", (e) => ago(e.at, ctx.now)],
    ["FROM", (e) => e.fromState],
    ["TO", (e) => e.toState],
    ["SOURCE", (e) => e.source],
    ["MESSAGE", (e) => e.message],
  ]);
  return { data: answer.body, human };
}

async function agents(ctx: Context): Promise<Outcome> {
  const answer = await ctx.api.call("GET", "/api/agents");
  const human = table(rows(answer, "agents"), [
    ["ID", (a) => a.id],
    ["NAME", (a) => a.name],
    ["MODE", (a) => ((a.settings as Row | undefined)?.mode as string | undefined) ?? "act"],
    ["ARCHIVED", (a) => (a.archived ? "yes" : "")],
  ]);
  return { data: answer.body, human };
}

export const COMMANDS: Command[] = [
  { name: "status", args: [], summary: "the agent at a glance (exit 8 when it needs attention)", run: status },
  { name: "instances", args: [], summary: "the fleet: state, GPU, cost, utilisation", run: instances },
  { name: "spend", args: [], summary: "spend today, per instance, and the last 7 days", run: spend },
  { name: "runs", args: [], summary: "recent runs (--limit N)", run: runs },
  { name: "approvals", args: [], summary: "approvals (--status pending|approved|rejected|expired)", run: approvals },
  { name: "approve", args: ["ID"], summary: "approve an approval (--note TEXT)", run: decide("approve") },
  {
    name: "reject",
    args: ["ID"],
    summary: "reject an approval (--note TEXT); the rejection blocks the agent from asking again",
    run: decide("reject"),
  },
  { name: "start", args: ["INSTANCE"], summary: "start an instance (exit 6 when it waits for approval)", run: act("start") },
  { name: "stop", args: ["INSTANCE"], summary: "stop an instance", run: act("stop") },
  { name: "reboot", args: ["INSTANCE"], summary: "reboot an instance", run: act("reboot") },
  { name: "pause", args: [], summary: "shadow mode: the agent proposes, nothing is done without a human", run: mode("shadow") },
  { name: "resume", args: [], summary: "back to acting", run: mode("act") },
  { name: "logs", args: ["INSTANCE"], summary: "the instance's state history (--limit N)", run: logs },
  { name: "agents", args: [], summary: "every agent", run: agents },
];
