/**
 * "This run holds the lease", written once: the agent row carries the run's lease token. It is
 * the compare-and-set that guards the claim's statements after it took the lease, the finish
 * batch, renewal, and every fenced effect of a run (pipeline/run-fence.ts).
 *
 * Expiry is an explicit choice, not a default. A run's effects and its renewal also need the lease
 * unexpired (`{ unexpiredAt: now }`): a run past its lease must stop acting. The claim and the
 * finish take any expiry (`"any expiry"`): the claim just set it, and a finish after expiry still
 * records a run nobody has recovered yet (recovery takes the token off the row, and then nothing
 * of the finish applies).
 */
import { and, eq, gt, sql, type SQL } from "drizzle-orm";
import { agents } from "../schema/index.ts";

export interface LeaseHolder {
  agentId: string;
  /** The random token the claim put on the agent row. */
  token: string;
}

export type LeaseExpiry = { unexpiredAt: number } | "any expiry";

/** Over the agents row: it carries `holder`'s lease (with `unexpiredAt`: one not expired then). */
export function leaseHeld(holder: LeaseHolder, expiry: LeaseExpiry): SQL {
  return and(
    eq(agents.id, holder.agentId),
    eq(agents.leaseToken, holder.token),
    expiry === "any expiry" ? undefined : gt(agents.leaseExpiresAt, expiry.unexpiredAt),
  )!;
}

/** For a statement on another table: the agent row carries `holder`'s lease (see leaseHeld). */
export function holdsLease(holder: LeaseHolder, expiry: LeaseExpiry): SQL {
  return sql`exists (select 1 from ${agents} where ${leaseHeld(holder, expiry)})`;
}

/** The run id of `holder`'s lease; null once the row no longer carries it. */
export function heldRunId(holder: LeaseHolder): SQL {
  return sql`(select ${agents.leaseRunId} from ${agents} where ${leaseHeld(holder, "any expiry")})`;
}
