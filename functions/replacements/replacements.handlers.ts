/**
 * Handlers of /api/agents/:agent/replacements (fleet/replacement-rows.ts). A cancel is taken only
 * before anything was rented (proposed, awaiting approval, approved): once a create was attempted,
 * stopping midway could leave a rental nobody watches, so that is a 409 naming the status.
 */
import type { Context } from "hono";
import { and, eq } from "drizzle-orm";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { replacements } from "../../schema/index.ts";
import { advance, listReplacements, presentReplacement } from "../../fleet/replacement-rows.ts";

type Ctx = Context<AppEnv>;

export async function getReplacements(c: Ctx, agentId: string, limit: number) {
  return c.json({ replacements: await listReplacements(c.get("deps"), agentId, limit) });
}

export async function cancelReplacement(c: Ctx, agentId: string, id: number) {
  const deps = c.get("deps");
  const who = c.get("operator");
  const [row] = await deps.db.select().from(replacements).where(and(eq(replacements.id, id), eq(replacements.agentId, agentId)));
  if (!row) throw new RequestError(404, `unknown replacement: ${id}`);
  const cancelled = await advance(deps, id, ["proposed", "awaiting_approval", "approved"], { status: "cancelled", operator: who.name, error: `cancelled by ${who.name}` });
  if (!cancelled) throw new RequestError(409, `replacement ${id} is ${row.status}: only one that has not rented yet can be cancelled`);
  return c.json(presentReplacement(cancelled));
}
