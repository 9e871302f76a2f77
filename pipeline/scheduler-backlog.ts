/**
 * The scheduler's backlog, for /healthz: deliveries of the local scheduler that are due and not
 * yet delivered, and how overdue the oldest is. QStash keeps its queue itself, so there it is null.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { deliveries } from "../schema/index.ts";

export interface SchedulerBacklog {
  due: number;
  /** Seconds the oldest due delivery has waited, 0 when none. */
  oldestWaitS: number;
}

export async function schedulerBacklog(deps: Pick<PipelineDeps, "db" | "clock" | "scheduler">): Promise<SchedulerBacklog | null> {
  if (deps.scheduler.kind === "qstash") return null;
  const now = deps.clock.now();
  const [row] = await deps.db
    .select({ due: sql<number>`count(*)`, oldest: sql<number | null>`min(${deliveries.dueAt})` })
    .from(deliveries)
    .where(and(eq(deliveries.status, "pending"), lte(deliveries.dueAt, now)));
  return { due: Number(row?.due ?? 0), oldestWaitS: row?.oldest == null ? 0 : Math.floor((now - row.oldest) / 1000) };
}
