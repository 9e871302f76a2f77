/**
 * Read model of a run's decision in one line, written by code from what the run left behind in the audit
 * tables (its actions, the wakes it scheduled, the notifications it sent, its reply), never from
 * the model's prose: "restarted sim-1; re-check in 5 min", "replied to a message", "no-op".
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { actions, notifications, wakes } from "../../schema/index.ts";

export interface RunEffects {
  actions: { kind: string; instanceId: string | null; status: string }[];
  wakes: { dueAt: number }[];
  notifications: { title: string }[];
}

export interface RunForOutcome {
  runId: number;
  status: string;
  noop: boolean | null;
  decider: string | null;
  reply: string | null;
  error: string | null;
  startedAt: string | null;
  triggers: { source: string }[];
}

/** The effects of each run in `runIds`, read in one batch. */
export async function loadRunEffects(deps: { db: Db }, agentId: string, runIds: number[]): Promise<Map<number, RunEffects>> {
  const map = new Map<number, RunEffects>(runIds.map((id) => [id, { actions: [], wakes: [], notifications: [] }]));
  if (runIds.length === 0) return map;
  const { db } = deps;
  const [actionRows, wakeRows, notificationRows] = await db.batch([
    db
      .select({ runId: actions.runId, kind: actions.kind, instanceId: actions.instanceId, status: actions.status })
      .from(actions)
      // A human-approved execution carries the requesting run's id, but it was a person's decision.
      .where(and(eq(actions.agentId, agentId), inArray(actions.runId, runIds), ne(actions.decidedBy, "human")))
      .orderBy(actions.id),
    db
      .select({ runId: wakes.createdByRun, dueAt: wakes.dueAt })
      .from(wakes)
      .where(and(eq(wakes.agentId, agentId), inArray(wakes.createdByRun, runIds)))
      .orderBy(wakes.id),
    db
      .select({ runId: notifications.runId, title: notifications.title })
      .from(notifications)
      .where(and(eq(notifications.agentId, agentId), inArray(notifications.runId, runIds)))
      .orderBy(notifications.id),
  ]);
  for (const a of actionRows) map.get(a.runId!)?.actions.push(a);
  for (const w of wakeRows) map.get(w.runId!)?.wakes.push(w);
  for (const n of notificationRows) map.get(n.runId!)?.notifications.push(n);
  return map;
}

const DONE: Record<string, string> = { start: "restarted", stop: "stopped", reboot: "rebooted", destroy: "destroyed", label: "relabelled" };

function actionPhrase(a: RunEffects["actions"][number]): string {
  const target = a.instanceId ?? "an instance";
  switch (a.status) {
    case "succeeded":
      return `${DONE[a.kind] ?? a.kind} ${target}`;
    case "awaiting_approval":
    case "approved":
    case "rejected":
      return `asked a human to approve ${a.kind} ${target}${a.status === "awaiting_approval" ? "" : ` (${a.status})`}`;
    case "rate_limited":
      return `${a.kind} ${target} refused by the rate limit`;
    case "failed":
      return `${a.kind} ${target} failed`;
    default:
      return `${a.kind} ${target} (${a.status})`;
  }
}

export function inMinutes(ms: number): string {
  if (ms < 90_000) return `${Math.max(1, Math.round(ms / 1000))} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

export function outcomeLine(run: RunForOutcome, effects: RunEffects | undefined): string {
  switch (run.status) {
    case "running":
      return "running…";
    case "skipped":
      return "skipped: nothing was left to consume";
    case "crashed":
      return "crashed (its lease expired); its events and wakes were handed to the next run";
    case "failed":
      return `failed: ${(run.error ?? "unknown error").split("\n")[0]!.slice(0, 140)}; its events are retried`;
  }
  const e = effects ?? { actions: [], wakes: [], notifications: [] };
  const parts = e.actions.map(actionPhrase);
  for (const n of e.notifications) parts.push(`notified a human: “${n.title}”`);
  const started = run.startedAt ? new Date(run.startedAt).getTime() : null;
  for (const w of e.wakes) parts.push(started === null ? "scheduled a re-check" : `re-check in ${inMinutes(w.dueAt - started)}`);
  if (run.reply && run.triggers.some((t) => t.source === "human")) parts.push("replied to a message");
  if (parts.length === 0) return run.noop ? "no-op" : "looked; nothing to change";
  return parts.join("; ");
}

/** A successful rules-policy run records why it fell back as its "error"; that is a note, not a failure. */
export function runNote(run: Pick<RunForOutcome, "status" | "decider" | "error">): { term: "Note" | "Error"; text: string } | null {
  if (!run.error) return null;
  const note = run.status === "succeeded" && run.decider === "rules" && run.error.includes("rules policy decided: ");
  return { term: note ? "Note" : "Error", text: run.error };
}
