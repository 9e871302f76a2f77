/** The conversation of the current epoch, as the API and dashboard show it. */
import { and, asc, eq } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import type { ConversationTurn } from "../../pipeline/index.ts";
import { agents, messages, sessions } from "../../schema/index.ts";
import type { ChatMessage } from "../llm/chat-model.ts";
import { countMessage } from "./tokens.ts";

export async function listConversation(deps: Pick<AgentDeps, "db">, agentId: string) {
  const [agent] = await deps.db.select({ epoch: agents.sessionEpoch }).from(agents).where(eq(agents.id, agentId));
  const epoch = agent?.epoch ?? 1;
  const [rows, session] = await deps.db.batch([
    deps.db
      .select()
      .from(messages)
      .where(and(eq(messages.agentId, agentId), eq(messages.sessionEpoch, epoch)))
      .orderBy(asc(messages.id)),
    deps.db
      .select()
      .from(sessions)
      .where(and(eq(sessions.agentId, agentId), eq(sessions.epoch, epoch))),
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
 * A run's messages as conversation turns, each with its token count measured now, as written.
 * The pipeline stores them (pipeline/finish-run.ts) only for a run that is not a no-op.
 */
export function toConversationTurns(turns: readonly ChatMessage[]): ConversationTurn[] {
  return turns.map((m) => ({
    role: m.role as ConversationTurn["role"],
    content: typeof m.content === "string" ? m.content : "",
    toolCalls: m.role === "assistant" && m.tool_calls?.length ? m.tool_calls : null,
    toolCallId: m.role === "tool" ? m.tool_call_id : null,
    tokens: countMessage(m),
  }));
}
