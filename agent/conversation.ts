/** The conversation of the current epoch, as the API and dashboard show it. */
import { and, asc, eq } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { agents, messages, sessions } from "../schema/index.ts";
import type { ChatMessage } from "./chat-model.ts";
import { countMessage } from "./tokens.ts";

export async function listConversation(deps: Deps, agentId: string) {
  const [agent] = await deps.db.select({ epoch: agents.sessionEpoch }).from(agents).where(eq(agents.id, agentId));
  const epoch = agent?.epoch ?? 1;
  const [rows, session] = await deps.db.batch([
    deps.db
      .select()
      .from(messages)
      .where(and(eq(messages.agentId, agentId), eq(messages.sessionEpoch, epoch)))
      .orderBy(asc(messages.id)),
    deps.db.select().from(sessions).where(and(eq(sessions.agentId, agentId), eq(sessions.epoch, epoch))),
  ]);
  return {
    sessionEpoch: epoch,
    summary: session[0]?.summary ?? "",
    messages: rows.map((m) => ({
      id: m.id,
      runId: m.runId,
      role: m.role,
      content: m.content,
      toolCalls: m.toolCalls,
      toolCallId: m.toolCallId,
      tokens: m.tokens,
      createdAt: new Date(m.createdAt).toISOString(),
    })),
  };
}

/**
 * Stores a run's turns in its epoch with each message's token count, measured as written. Only
 * runs that are not no-ops call this: a no-op run adds nothing to the conversation.
 */
export async function storeRunTurns(
  deps: Deps,
  run: { agentId: string; sessionEpoch: number; runId: number },
  turns: readonly ChatMessage[],
): Promise<void> {
  if (turns.length === 0) return;
  const now = deps.clock.now();
  await deps.db.insert(messages).values(
    turns.map((m) => ({
      agentId: run.agentId,
      sessionEpoch: run.sessionEpoch,
      runId: run.runId,
      role: m.role,
      content: typeof m.content === "string" ? m.content : "",
      toolCalls: m.role === "assistant" && m.tool_calls?.length ? m.tool_calls : null,
      toolCallId: m.role === "tool" ? m.tool_call_id : null,
      tokens: countMessage(m),
      createdAt: now,
    })),
  );
}
