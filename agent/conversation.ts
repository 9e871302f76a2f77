/** The conversation of the current epoch, as the API and dashboard show it. */
import { and, asc, eq } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { agents, messages, sessions } from "../schema/index.ts";

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
