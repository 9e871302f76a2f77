/**
 * Pinned memory: facts the agent saves with `remember` and drops with `forget`. They are sent with
 * every prompt (within a cap) and survive session resets, so they stay few and short.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { AgentDeps } from "./deps.ts";
import { memory } from "../schema/index.ts";
import { countText } from "./tokens.ts";
import { fenceHolds, refusedUnlessFenced, type RunFence } from "../pipeline/index.ts";

export const MAX_MEMORY_FACTS = 50;

export class MemoryFullError extends Error {
  constructor() {
    super(`memory is full (${MAX_MEMORY_FACTS} facts); forget one first`);
    this.name = "MemoryFullError";
  }
}

export async function listMemory(deps: Pick<AgentDeps, "db">, agentId: string) {
  return deps.db
    .select({ key: memory.key, fact: memory.fact, tokens: memory.tokens })
    .from(memory)
    .where(eq(memory.agentId, agentId))
    .orderBy(asc(memory.key));
}

/** Refuses a new key once the agent holds MAX_MEMORY_FACTS. */
/** Saves or replaces a fact under the writing run's fence (null: not a run's write). */
export async function remember(deps: Pick<AgentDeps, "db" | "clock">, agentId: string, key: string, fact: string, fence: RunFence | null = null): Promise<{ replaced: boolean }> {
  const now = deps.clock.now();
  const runId = fence?.runId ?? null;
  const count = sql`(select count(*) from ${memory} where ${memory.agentId} = ${agentId})`;
  const [existing, inserted] = await deps.db.batch([
    deps.db.select({ key: memory.key }).from(memory).where(and(eq(memory.agentId, agentId), eq(memory.key, key))),
    deps.db.all<{ key: string }>(sql`insert into ${memory} (agent_id, key, fact, tokens, created_by_run, updated_at)
      select ${agentId}, ${key}, ${fact}, ${countText(fact)}, ${runId}, ${now}
      where (exists (select 1 from ${memory} where ${memory.agentId} = ${agentId} and ${memory.key} = ${key}) or ${count} < ${MAX_MEMORY_FACTS})
        and ${fenceHolds(fence, now)}
      on conflict (agent_id, key) do update set fact = excluded.fact, tokens = excluded.tokens,
        created_by_run = excluded.created_by_run, updated_at = excluded.updated_at
      returning key`),
  ]);
  if (!inserted[0]) {
    await refusedUnlessFenced(deps, fence, `remembering ${key}`);
    throw new MemoryFullError();
  }
  return { replaced: existing.length > 0 };
}

export async function forget(deps: Pick<AgentDeps, "db" | "clock">, agentId: string, key: string, fence: RunFence | null = null): Promise<boolean> {
  const rows = await deps.db
    .delete(memory)
    .where(and(eq(memory.agentId, agentId), eq(memory.key, key), fenceHolds(fence, deps.clock.now())))
    .returning({ key: memory.key });
  if (rows.length === 0) await refusedUnlessFenced(deps, fence, `forgetting ${key}`);
  return rows.length > 0;
}
