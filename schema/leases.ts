/**
 * Rentals on a lease (fleet/leases/): who rented an instance through fleetwarden (an operator, and
 * the MCP client acting for them), why, and until when. A lease that ends unrenewed is told to its
 * owner, and after LEASE_GRACE_S the instance is stopped; the owner's daily budget is summed over
 * the instances they hold. One row per rented instance; a released or ended lease keeps its row.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const leases = sqliteTable(
  "leases",
  {
    agentId: text().notNull(),
    instanceId: text().notNull(),
    /** The operator who rented it (operators.name). */
    owner: text().notNull(),
    /** The MCP client acting for the owner (its clientInfo name), or "api" / "dashboard". */
    client: text(),
    purpose: text().notNull(),
    /** When the lease runs out unless extended (ms epoch). */
    endsAt: integer().notNull(),
    /** When it ended: released by its owner, stopped after its grace, or the instance gone. */
    endedAt: integer(),
    /** released | expired | gone */
    endReason: text(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.agentId, t.instanceId] }),
    // The tick's expiry sweep reads only open leases, soonest first.
    index("leases_open").on(t.endsAt).where(sql`ended_at is null`),
    index("leases_owner").on(t.owner, t.agentId),
  ],
);
