/**
 * Pinned memory: facts the agent saves with `remember` and drops with `forget`. They are sent with
 * every prompt (within a cap) and survive session resets, so they stay few and short.
 */
import { and, asc, eq, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { AgentDeps } from "./deps.ts";
import { insertWhere } from "../db/insert-where.ts";
import { memory } from "../schema/index.ts";
import { countText } from "./tokens.ts";
import { fencedWrite, type RunFence } from "../pipeline/index.ts";

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

/** The row an upsert proposed (SQLite's `excluded`), with the table's columns. */
const proposed = alias(memory, "excluded");

/**
 * Saves or replaces a fact under the writing run's fence (null: not a run's write). Refuses a new
 * key once the agent holds MAX_MEMORY_FACTS.
 */
export async function remember(deps: Pick<AgentDeps, "db" | "clock">, agentId: string, key: string, fact: string, fence: RunFence | null = null): Promise<{ replaced: boolean }> {
  const { db } = deps;
  const now = deps.clock.now();
  const mine = and(eq(memory.agentId, agentId), eq(memory.key, key));
  const count = sql`(select count(*) from ${memory} where ${memory.agentId} = ${agentId})`;
  const [existing, inserted] = await fencedWrite(
    deps,
    fence,
    `remembering ${key}`,
    (holds) =>
      db.batch([
        db.select({ key: memory.key }).from(memory).where(mine),
        insertWhere(
          db,
          memory,
          { agentId, key, fact, tokens: countText(fact), createdByRun: fence?.runId ?? null, updatedAt: now },
          and(or(sql`exists (select 1 from ${memory} where ${mine})`, sql`${count} < ${MAX_MEMORY_FACTS}`), holds)!,
        )
          .onConflictDoUpdate({
            target: [memory.agentId, memory.key],
            set: { fact: sql`${proposed.fact}`, tokens: sql`${proposed.tokens}`, createdByRun: sql`${proposed.createdByRun}`, updatedAt: sql`${proposed.updatedAt}` },
          })
          .returning({ key: memory.key }),
      ]),
    ([, inserted]) => inserted.length > 0,
  );
  if (!inserted[0]) throw new MemoryFullError();
  return { replaced: existing.length > 0 };
}

export async function forget(deps: Pick<AgentDeps, "db" | "clock">, agentId: string, key: string, fence: RunFence | null = null): Promise<boolean> {
  const rows = await fencedWrite(deps, fence, `forgetting ${key}`, (holds) =>
    deps.db
      .delete(memory)
      .where(and(eq(memory.agentId, agentId), eq(memory.key, key), holds))
      .returning({ key: memory.key }),
  );
  return rows.length > 0;
}
