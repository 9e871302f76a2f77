/**
 * How a situation is scored: the decisions made from its first scored step on — action rows
 * (whatever their status: a request refused by a guard was still decided) and notifications a
 * run sent (approval pages aside: filing an approval sends those) — against what it expects and
 * forbids. It passes when nothing expected is missed and nothing forbidden was done. Time to
 * act is simulated seconds from the first scored step to the last expected decision; LLM calls
 * and tokens are read from the runs of the scored window.
 */
import { and, eq, gte } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { actions, notifications, runs } from "../schema/index.ts";
import type { DecisionKind, DecisionMatch, Situation } from "./situation.ts";

export interface Decision {
  kind: DecisionKind;
  /** The instance it is about (a notification without one: every instance its text names). */
  instances: string[];
  at: number;
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
  const [acted, told] = await db.batch([
    db.select().from(actions).where(and(eq(actions.agentId, agentId), gte(actions.createdAt, from))).orderBy(actions.id),
    db.select().from(notifications).where(and(eq(notifications.agentId, agentId), gte(notifications.createdAt, from))).orderBy(notifications.id),
  ]);
  return [
    ...acted.filter((a) => a.kind !== "label").map((a) => ({ kind: a.kind as DecisionKind, instances: a.instanceId ? [a.instanceId] : [], at: a.createdAt })),
    ...told
      .filter((n) => n.runId !== null && !n.title.startsWith("Approval needed"))
      .map((n) => ({ kind: "notify" as const, instances: n.instanceId ? [n.instanceId] : fleet.filter((id) => `${n.title} ${n.body}`.includes(id)), at: n.createdAt })),
  ].sort((a, b) => a.at - b.at);
}

const matches = (m: DecisionMatch, d: Decision) => m.kinds.includes(d.kind) && (m.instance === "*" || d.instances.includes(m.instance));
const describe = (m: DecisionMatch) => `${m.kinds.join("|")} ${m.instance}`;

export function judge(situation: Situation, decisions: readonly Decision[], from: number): Omit<SituationResult, "llmCalls" | "tokens"> {
  const missed = situation.expect.filter((m) => !decisions.some((d) => matches(m, d))).map(describe);
  const wrong = decisions.filter((d) => situation.forbid.some((m) => matches(m, d))).map((d) => `${d.kind} ${d.instances.join(",") || "?"}`);
  const firsts = situation.expect.map((m) => decisions.find((d) => matches(m, d))?.at);
  const timeToActS = situation.expect.length && missed.length === 0 ? Math.round((Math.max(...(firsts as number[])) - from) / 1000) : null;
  return {
    name: situation.name,
    pass: missed.length === 0 && wrong.length === 0,
    missed,
    wrong: [...new Set(wrong)],
    timeToActS,
    decisions: decisions.map((d) => `${d.kind} ${d.instances.join(",") || "?"}`),
  };
}

/** LLM calls (chat calls, as each run's compaction report lists them) and tokens of the runs since `from`. */
export async function llmUse(db: Db, agentId: string, from: number): Promise<{ llmCalls: number; tokens: number }> {
  const rows = await db.select().from(runs).where(and(eq(runs.agentId, agentId), gte(runs.startedAt, from)));
  return {
    llmCalls: rows.reduce((n, r) => n + ((r.compaction as { calls?: unknown[] } | null)?.calls?.length ?? 0), 0),
    tokens: rows.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0),
  };
}
