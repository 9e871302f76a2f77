/**
 * How a situation is scored: the decisions made from its first scored step on — action rows
 * (whatever their status: a request refused by a guard was still decided; one filed for approval
 * says so) and notifications a run sent or the cron tick's economics check sent with its
 * once-mark (approval pages aside: filing an approval sends those) — against what it expects and
 * forbids. It passes when nothing expected is missed and nothing forbidden was done. Time to
 * act is simulated seconds from the first scored step to the last expected decision; LLM calls
 * and tokens are read from the runs of the scored window.
 */
import { and, eq, gte } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { actions, notifications, onceNotices, runs } from "../schema/index.ts";
import type { DecisionKind, DecisionMatch, Situation } from "./situation.ts";

export interface Decision {
  kind: DecisionKind;
  /** The instance it is about (a notification without one: every instance its text names). */
  instances: string[];
  at: number;
  /** An action filed as an approval request rather than taken. */
  asked: boolean;
  /** A notification's title ("" for an action). */
  title: string;
}

export interface SituationResult {
  name: string;
  pass: boolean;
  missed: string[];
  wrong: string[];
  /** Simulated seconds to the last expected decision; null when nothing was expected or it was missed. */
  timeToActS: number | null;
  llmCalls: number;
  tokens: number;
  decisions: string[];
}

export async function decisionsSince(db: Db, agentId: string, from: number, fleet: readonly string[]): Promise<Decision[]> {
  const [acted, told, marked] = await db.batch([
    db
      .select()
      .from(actions)
      .where(and(eq(actions.agentId, agentId), gte(actions.createdAt, from)))
      .orderBy(actions.id),
    db
      .select()
      .from(notifications)
      .where(and(eq(notifications.agentId, agentId), gte(notifications.createdAt, from)))
      .orderBy(notifications.id),
    db
      .select({ id: onceNotices.notificationId })
      .from(onceNotices)
      .where(and(eq(onceNotices.agentId, agentId), gte(onceNotices.at, from))),
  ]);
  const tickNotices = new Set(marked.map((m) => m.id));
  return [
    ...acted
      .filter((a) => a.kind !== "label")
      .map((a) => ({
        kind: a.kind as DecisionKind,
        instances: a.instanceId ? [a.instanceId] : [],
        at: a.createdAt,
        asked: a.approvalId !== null || a.status === "awaiting_approval",
        title: "",
      })),
    ...told
      // A money move's own notice (fleet/actions/money-told.ts) echoes the action scored above, not a decision to tell.
      .filter(
        (n) => (n.runId !== null || tickNotices.has(n.id)) && !n.title.startsWith("Approval needed") && !n.dedupKey.startsWith("money:"),
      )
      .map((n) => ({
        kind: "notify" as const,
        instances: n.instanceId ? [n.instanceId] : fleet.filter((id) => `${n.title} ${n.body}`.includes(id)),
        at: n.createdAt,
        asked: false,
        title: n.title,
      })),
  ].sort((a, b) => a.at - b.at);
}

const matches = (m: DecisionMatch, d: Decision) =>
  m.kinds.includes(d.kind) &&
  (m.instance === "*" || d.instances.includes(m.instance)) &&
  (m.asked === undefined || m.asked === d.asked) &&
  (m.about === undefined || d.title.includes(m.about));
const describe = (m: DecisionMatch) =>
  `${m.kinds.join("|")}${m.asked === undefined ? "" : m.asked ? " (asked)" : " (unasked)"} ${m.instance}${m.about ? ` "${m.about}"` : ""}${m.allowed ? ` beyond ${m.allowed}` : ""}`;
const show = (d: Decision) => `${d.kind}${d.asked ? " (asked)" : ""} ${d.instances.join(",") || "?"}`;

/** The decisions `m` forbids: all it matches, past the first `allowed`. */
function forbidden(m: DecisionMatch, decisions: readonly Decision[]): Decision[] {
  return decisions.filter((d) => matches(m, d)).slice(m.allowed ?? 0);
}

export function judge(situation: Situation, decisions: readonly Decision[], from: number): Omit<SituationResult, "llmCalls" | "tokens"> {
  const missed = situation.expect.filter((m) => !decisions.some((d) => matches(m, d))).map(describe);
  const wrongOnes = new Set(situation.forbid.flatMap((m) => forbidden(m, decisions)));
  const wrong = decisions.filter((d) => wrongOnes.has(d)).map(show);
  const firsts = situation.expect.map((m) => decisions.find((d) => matches(m, d))?.at);
  const timeToActS = situation.expect.length && missed.length === 0 ? Math.round((Math.max(...(firsts as number[])) - from) / 1000) : null;
  return {
    name: situation.name,
    pass: missed.length === 0 && wrong.length === 0,
    missed,
    wrong: [...new Set(wrong)],
    timeToActS,
    decisions: decisions.map(show),
  };
}

/** LLM calls (chat calls, as each run's compaction report lists them) and tokens of the runs since `from`. */
export async function llmUse(db: Db, agentId: string, from: number): Promise<{ llmCalls: number; tokens: number }> {
  const rows = await db
    .select()
    .from(runs)
    .where(and(eq(runs.agentId, agentId), gte(runs.startedAt, from)));
  return {
    llmCalls: rows.reduce((n, r) => n + ((r.compaction as { calls?: unknown[] } | null)?.calls?.length ?? 0), 0),
    tokens: rows.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0),
  };
}
