/**
 * Handlers of /api/agents/:agent/actions: the audit of every provider action, newest first, a
 * page at a time (`nextCursor`), or all of it as a CSV or JSON Lines download.
 */
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { actionsPage, exportActions } from "../../jobs/actions-audit.ts";
import type { actionsQuery } from "./actions.schemas.ts";

const TYPES = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson; charset=utf-8" } as const;

export async function getActions(c: Context<AppEnv>, agentId: string, query: z.infer<typeof actionsQuery>) {
  const { db } = c.get("deps");
  if (query.format === "json") return c.json(await actionsPage(db, agentId, query.limit, query.cursor));
  return c.body(exportActions(db, agentId, query.format), 200, {
    "Content-Type": TYPES[query.format],
    "Content-Disposition": `attachment; filename="actions-${agentId}.${query.format}"`,
  });
}
