/**
 * Pinned memory: facts the agent saves with `remember` and drops with `forget`. They are sent with
 * every prompt (within a cap) and survive session resets (unless the reset asks to clear them), so
 * they stay few and short. A human lists them and deletes one (`forget` without a fence, from the
 * API and the dashboard). A fact written by a run whose input held text no operator typed is marked
 * `untrusted` (the rule: agent/prompt/untrusted-input.ts), worked out in the write itself. Pinned
 * facts are in every prompt, so an untrusted fact is text no operator typed in the run's input
 * too: while one is pinned, a run's fact is untrusted (a copy under a new key keeps the mark).
 */
import { and, asc, eq, inArray, not, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { AgentDeps } from "./deps.ts";
import { insertWhere } from "../db/insert-where.ts";
import { events, memory, wakes } from "../schema/index.ts";
import { hasReadProviderText, OPERATOR_SOURCES } from "./prompt/untrusted-input.ts";
import { countText } from "./prompt/tokens.ts";
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
    .select({
      key: memory.key,
      fact: memory.fact,
      tokens: memory.tokens,
      untrusted: memory.untrusted,
      createdByRun: memory.createdByRun,
      updatedAt: memory.updatedAt,
    })
    .from(memory)
    .where(eq(memory.agentId, agentId))
    .orderBy(asc(memory.key));
}

/** The row an upsert proposed (SQLite's `excluded`), with the table's columns. */
const proposed = alias(memory, "excluded");

/** SQL: the run's input held text no operator typed (see agent/prompt/untrusted-input.ts). */
function untrustedInput(agentId: string, fence: RunFence | null) {
  if (!fence) return sql`0`;
  if (hasReadProviderText(fence)) return sql`1`;
  const woke = sql`exists (select 1 from ${events} where ${and(eq(events.agentId, agentId), eq(events.runId, fence.runId), not(inArray(events.source, [...OPERATOR_SOURCES])))})`;
  const wake = sql`exists (select 1 from ${wakes} where ${and(eq(wakes.agentId, agentId), eq(wakes.consumedByRun, fence.runId))})`;
  // The prompt carried every pinned fact: an untrusted one taints what the run writes.
  const pinned = sql`exists (select 1 from ${memory} where ${and(eq(memory.agentId, agentId), eq(memory.untrusted, true))})`;
  return sql`(${woke} or ${wake} or ${pinned})`;
}

/**
 * Saves or replaces a fact under the writing run's fence (null: not a run's write). Refuses a new
 * key once the agent holds MAX_MEMORY_FACTS.
 */
export async function remember(
  deps: Pick<AgentDeps, "db" | "clock">,
  agentId: string,
  key: string,
  fact: string,
  fence: RunFence | null = null,
): Promise<{ replaced: boolean }> {
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
          {
            agentId,
            key,
            fact,
            tokens: countText(fact),
            createdByRun: fence?.runId ?? null,
            untrusted: untrustedInput(agentId, fence),
            updatedAt: now,
          },
          and(or(sql`exists (select 1 from ${memory} where ${mine})`, sql`${count} < ${MAX_MEMORY_FACTS}`), holds)!,
        )
          .onConflictDoUpdate({
            target: [memory.agentId, memory.key],
            set: {
              fact: sql`${proposed.fact}`,
              tokens: sql`${proposed.tokens}`,
              createdByRun: sql`${proposed.createdByRun}`,
              untrusted: sql`${proposed.untrusted}`,
              updatedAt: sql`${proposed.updatedAt}`,
            },
          })
          .returning({ key: memory.key }),
      ]),
    ([, inserted]) => inserted.length > 0,
  );
  if (!inserted[0]) throw new MemoryFullError();
  return { replaced: existing.length > 0 };
}

export async function forget(
  deps: Pick<AgentDeps, "db" | "clock">,
  agentId: string,
  key: string,
  fence: RunFence | null = null,
): Promise<boolean> {
  const rows = await fencedWrite(deps, fence, `forgetting ${key}`, (holds) =>
    deps.db
      .delete(memory)
      .where(and(eq(memory.agentId, agentId), eq(memory.key, key), holds))
      .returning({ key: memory.key }),
  );
  return rows.length > 0;
}
