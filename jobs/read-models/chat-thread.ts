/**
 * Read model of the chat as an operator reads it: each human message (an inbox event from source `human`)
 * with what became of it: waiting for a run, being answered, or answered by the reply of the
 * run that consumed it. A run that consumed several messages answers them once, under the last.
 * With the sessions (conversation epochs) and when each started, so the thread can mark resets.
 */
import { and, asc, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { events, runs, sessions } from "../../schema/index.ts";

export interface ChatEntry {
  eventId: number;
  text: string;
  /** The operator who sent it (payload.operator); null on messages from before names were kept. */
  operator: string | null;
  sentAt: number;
  /** waiting: no run yet · working: its run is running · answered · retrying: its run failed */
  state: "waiting" | "working" | "answered" | "retrying";
  runId: number | null;
  sessionEpoch: number | null;
  reply: string | null;
  /** False when a later message of the same run carries the reply. */
  showsReply: boolean;
}

export async function listChatThread(deps: { db: Db }, agentId: string, limit = 50): Promise<ChatEntry[]> {
  const rows = await deps.db
    .select({
      eventId: events.id,
      payload: events.payload,
      status: events.status,
      createdAt: events.createdAt,
      runId: events.runId,
      runStatus: runs.status,
      runEpoch: runs.sessionEpoch,
      reply: runs.reply,
    })
    .from(events)
    .leftJoin(runs, and(eq(runs.agentId, events.agentId), eq(runs.runId, events.runId)))
    .where(and(eq(events.agentId, agentId), eq(events.source, "human")))
    .orderBy(desc(events.id))
    .limit(limit);

  const repliedRuns = new Set<number>();
  const entries = rows.map((row): ChatEntry => {
    const payload = (row.payload ?? {}) as { text?: unknown; operator?: unknown };
    const state =
      row.status === "pending"
        ? "waiting"
        : row.runStatus === "running"
          ? "working"
          : row.runStatus === "succeeded"
            ? "answered"
            : "retrying";
    const showsReply = state === "answered" && row.runId !== null && !repliedRuns.has(row.runId);
    if (showsReply) repliedRuns.add(row.runId!);
    return {
      eventId: row.eventId,
      text: typeof payload.text === "string" ? payload.text : JSON.stringify(payload),
      operator: typeof payload.operator === "string" ? payload.operator : null,
      sentAt: row.createdAt,
      state,
      runId: row.runId,
      sessionEpoch: row.runEpoch,
      reply: row.reply,
      showsReply,
    };
  });
  return entries.reverse();
}

export interface SessionStart {
  epoch: number;
  startedAt: number;
  /** The operator whose reset began it (null for the first session). */
  startedBy: string | null;
}

export interface ChatThreadData {
  entries: ChatEntry[];
  sessions: SessionStart[];
}

export async function loadChatThread(deps: { db: Db }, agentId: string): Promise<ChatThreadData> {
  const [entries, started] = await Promise.all([
    listChatThread(deps, agentId),
    deps.db
      .select({ epoch: sessions.epoch, startedAt: sessions.startedAt, startedBy: sessions.startedBy })
      .from(sessions)
      .where(eq(sessions.agentId, agentId))
      .orderBy(asc(sessions.epoch)),
  ]);
  return { entries, sessions: started };
}

/**
 * The epoch a message belongs to: its run's epoch once a run took it, otherwise the latest epoch
 * that had started when it was sent.
 */
export function epochOf(entry: ChatEntry, started: SessionStart[]): number {
  if (entry.sessionEpoch !== null) return entry.sessionEpoch;
  let epoch = started[0]?.epoch ?? 1;
  for (const s of started) if (s.startedAt <= entry.sentAt) epoch = s.epoch;
  return epoch;
}
