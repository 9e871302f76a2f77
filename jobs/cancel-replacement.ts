/**
 * An operator cancelling a replacement (POST /api/agents/:agent/replacements/:id/cancel). Taken
 * only before anything was rented (proposed, awaiting approval, approved): once a create was
 * attempted, stopping midway could leave a rental nobody watches, so that is a 409 naming the
 * status. The cancel names its operator on the row and in the activity log.
 */
import { and, eq } from "drizzle-orm";
import type { Deps } from "./deps.ts";
import { RequestError } from "./errors.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { replacements } from "../schema/index.ts";
import { advance, presentReplacement } from "../fleet/replacement/replacement-rows.ts";

export async function cancelReplacementAsOperator(deps: Deps, who: Principal, agentId: string, id: number) {
  const [row] = await deps.db
    .select()
    .from(replacements)
    .where(and(eq(replacements.id, id), eq(replacements.agentId, agentId)));
  if (!row) throw new RequestError(404, `unknown replacement: ${id}`);
  const cancelled = await advance(deps, id, ["proposed", "awaiting_approval", "approved"], {
    status: "cancelled",
    operator: who.name,
    error: `cancelled by ${who.name}`,
  });
  if (!cancelled) throw new RequestError(409, `replacement ${id} is ${row.status}: only one that has not rented yet can be cancelled`);
  await recordActivity(deps.db, who, {
    action: "replacement_cancel",
    agentId,
    subject: `replacement #${id} of ${row.oldInstanceId}`,
    at: deps.clock.now(),
  });
  return presentReplacement(cancelled);
}
