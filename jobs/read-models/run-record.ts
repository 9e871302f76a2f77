/**
 * Read model of one run's page: the run (the same read as GET /api/agents/:agent/runs/:id,
 * pipeline's getRun), then in one batch the events and wakes it consumed (ids copied into the
 * run at claim), the wakes it scheduled, and its conversation turns (assistant turns with their tool calls, and the tool results that answered them), then
 * its kept LLM calls and its last replay.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { events, messages, wakes } from "../../schema/index.ts";
import { getRun } from "../../pipeline/index.ts";
import { loadRunEffects, outcomeLine } from "./run-outcome.ts";
import { listLlmCalls } from "../../agent/llm/transcripts.ts";
import { lastReplay } from "../../agent/llm/replay.ts";

export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
}

export async function getRunRecord(deps: Parameters<typeof getRun>[0], agentId: string, runId: number) {
  const { db } = deps;
  const run = await getRun(deps, agentId, runId);
  if (!run) return null;
  const eventIds = run.triggers.map((t) => t.id).filter((id) => Number.isInteger(id));
  const wakeIds = run.wakesConsumed.filter((id) => Number.isInteger(id));
  const [eventRows, consumedWakes, createdWakes, turns] = await db.batch([
    db
      .select()
      .from(events)
      .where(and(eq(events.agentId, agentId), inArray(events.id, eventIds.length ? eventIds : [-1])))
      .orderBy(asc(events.id)),
    db
      .select()
      .from(wakes)
      .where(and(eq(wakes.agentId, agentId), inArray(wakes.id, wakeIds.length ? wakeIds : [-1])))
      .orderBy(asc(wakes.id)),
    db
      .select()
      .from(wakes)
      .where(and(eq(wakes.agentId, agentId), eq(wakes.createdByRun, runId)))
      .orderBy(asc(wakes.id)),
    db
      .select()
      .from(messages)
      .where(and(eq(messages.agentId, agentId), eq(messages.runId, runId)))
      .orderBy(asc(messages.id)),
  ]);
  const [effects, llmCalls, replay] = await Promise.all([
    loadRunEffects(deps, agentId, [runId]),
    listLlmCalls(deps, agentId, runId),
    lastReplay(deps, agentId, runId),
  ]);
  return {
    run,
    outcome: outcomeLine(run, effects.get(runId)),
    events: eventRows,
    consumedWakes,
    createdWakes,
    llmCalls,
    replay,
    turns: turns.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      tokens: m.tokens,
      toolCallId: m.toolCallId,
      operator: m.operator,
      toolCalls: toolCallsOf(m.toolCalls),
    })),
  };
}

export type RunRecord = NonNullable<Awaited<ReturnType<typeof getRunRecord>>>;

/** OpenAI-shaped tool calls ({id, function: {name, arguments}}) as stored with an assistant turn. */
function toolCallsOf(value: unknown): ToolCallView[] {
  const list = typeof value === "string" ? safeParse(value) : value;
  if (!Array.isArray(list)) return [];
  return list.map((call: { id?: unknown; function?: { name?: unknown; arguments?: unknown }; name?: unknown }) => ({
    id: String(call?.id ?? ""),
    name: String(call?.function?.name ?? call?.name ?? "tool"),
    arguments: typeof call?.function?.arguments === "string" ? call.function.arguments : JSON.stringify(call?.function?.arguments ?? {}),
  }));
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
