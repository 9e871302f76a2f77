/**
 * Test helper: puts a run's lease on the agent row directly (as a claim would) and returns the
 * run's fence, for tests that call a run's effects (tools, the rules policy) without a delivery.
 */
import { sql } from "drizzle-orm";
import type { Deps } from "../../jobs/deps.ts";
import type { RunFence } from "../../pipeline/index.ts";

export async function holdLease(deps: Pick<Deps, "db" | "clock" | "config">, agentId: string, runId: number): Promise<RunFence> {
  const now = deps.clock.now();
  const token = crypto.randomUUID();
  const leaseExpiresAt = now + deps.config.runLeaseMs;
  await deps.db.run(
    sql`update agents set lease_token = ${token}, lease_run_id = ${runId}, lease_expires_at = ${leaseExpiresAt} where id = ${agentId}`,
  );
  return { agentId, runId, token, leaseExpiresAt, deadline: leaseExpiresAt - 30_000 };
}
