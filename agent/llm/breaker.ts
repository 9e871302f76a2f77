/**
 * A circuit breaker kept in the `breakers` table, so every Worker isolate and process sees the
 * same state. After `threshold` consecutive failures it opens for a cool-down that doubles with
 * each further failure (capped); once the cool-down has passed, calls are let through again, and
 * the first success closes it. While open, callers skip the endpoint instead of hammering it.
 * A failure that retrying cannot fix (the endpoint is misconfigured) is also kept as text, so
 * /healthz can name it until a call succeeds again.
 *
 * The LLM's breaker is one per agent and model (llmBreakerName): one agent's bad model setting
 * opens its own breaker, never another agent's, and a changed model starts with a closed one.
 */
import { eq, sql } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import { breakers } from "../../schema/index.ts";

export interface BreakerPolicy {
  threshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

/** The breaker row of one agent's calls to one model (the `name` column is free text). */
export function llmBreakerName(agentId: string, model: string): string {
  return `llm:${agentId}:${model}`;
}

/** The agent and model a breaker name from llmBreakerName stands for; null for any other breaker. */
export function parseLlmBreakerName(name: string): { agentId: string; model: string } | null {
  const match = /^llm:([^:]+):(.+)$/.exec(name);
  return match ? { agentId: match[1]!, model: match[2]! } : null;
}

export const DEFAULT_BREAKER: BreakerPolicy = { threshold: 3, cooldownMs: 30_000, maxCooldownMs: 600_000 };

export class Breaker {
  constructor(
    private readonly deps: Pick<AgentDeps, "db" | "clock">,
    readonly name: string,
    private readonly policy: BreakerPolicy = DEFAULT_BREAKER,
  ) {}

  /** When the breaker is open, the time (ms epoch) it lets calls through again; otherwise null. */
  async openUntil(): Promise<number | null> {
    const [row] = await this.deps.db.select({ openUntil: breakers.openUntil }).from(breakers).where(eq(breakers.name, this.name));
    const until = row?.openUntil ?? null;
    return until !== null && until > this.deps.clock.now() ? until : null;
  }

  async recordSuccess(): Promise<void> {
    await this.deps.db
      .update(breakers)
      .set({ failures: 0, openUntil: null, misconfigured: null, updatedAt: this.deps.clock.now() })
      .where(eq(breakers.name, this.name));
  }

  /** Counts a failure that retries cannot fix and keeps why, until the next success. */
  async recordMisconfigured(reason: string): Promise<void> {
    await this.recordFailure();
    await this.deps.db
      .update(breakers)
      .set({ misconfigured: reason.slice(0, 500) })
      .where(eq(breakers.name, this.name));
  }

  /** Counts a failure; opens (or re-opens, longer) once the count reaches the threshold. */
  async recordFailure(): Promise<void> {
    const now = this.deps.clock.now();
    const { threshold, cooldownMs, maxCooldownMs } = this.policy;
    // cool-down = cooldownMs * 2^(failures past the threshold), capped; computed in SQL so
    // concurrent failures in different isolates compound correctly.
    const failures = sql`${breakers.failures} + 1`;
    const cooldown = sql`min(${maxCooldownMs}, ${cooldownMs} * (1 << min(20, max(0, ${failures} - ${threshold}))))`;
    await this.deps.db
      .insert(breakers)
      .values({ name: this.name, failures: 1, openUntil: threshold <= 1 ? now + cooldownMs : null, updatedAt: now })
      .onConflictDoUpdate({
        target: breakers.name,
        set: {
          failures,
          openUntil: sql`case when ${failures} >= ${threshold} then ${now} + ${cooldown} else null end`,
          updatedAt: now,
        },
      });
  }

  async state(): Promise<{ failures: number; openUntil: number | null; misconfigured: string | null }> {
    const [row] = await this.deps.db.select().from(breakers).where(eq(breakers.name, this.name));
    return { failures: row?.failures ?? 0, openUntil: row?.openUntil ?? null, misconfigured: row?.misconfigured ?? null };
  }
}
