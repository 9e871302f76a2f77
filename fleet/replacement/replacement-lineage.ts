/**
 * A finished replacement's lineage: `replacedBy` on the old instance, `replaces` on the new one
 * (its row written if the fleet has not listed it yet), in one batch, by the stepper that moved
 * the row to done.
 */
import { sql } from "drizzle-orm";
import type { ActionDeps } from "../actions/actions.ts";
import { instances } from "../../schema/index.ts";
import type { Basis, ReplacementRow } from "./replacement-rows.ts";

/** What the provider says about the new, running instance. */
export type Running = {
  label: string | null;
  gpuName: string | null;
  gpuCount: number | null;
  pricePerHour: number | null;
  machineId?: string | null;
};

export async function recordLineage(deps: ActionDeps, row: ReplacementRow, newId: string, fresh: Running) {
  const now = deps.clock.now();
  const basis = row.basis as Basis;
  await deps.db.batch([
    deps.db
      .update(instances)
      .set({ replacedBy: newId, updatedAt: now })
      .where(sql`${instances.agentId} = ${row.agentId} and ${instances.id} = ${row.oldInstanceId}`),
    deps.db
      .insert(instances)
      .values({
        agentId: row.agentId,
        id: newId,
        state: "running",
        stateAt: now,
        lastSeenAt: now,
        label: basis.label ?? fresh.label,
        gpuName: fresh.gpuName,
        gpuCount: fresh.gpuCount,
        pricePerHour: fresh.pricePerHour,
        machineId: fresh.machineId ?? null,
        replaces: row.oldInstanceId,
        statusMessage: "running",
        updatedAt: now,
      })
      .onConflictDoUpdate({ target: [instances.agentId, instances.id], set: { replaces: row.oldInstanceId, updatedAt: now } }),
  ]);
}
