/** Wiring of /api/agents/:agent/blocks. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { blockParam, blocksQuery } from "./blocks.schemas.ts";
import * as h from "./blocks.handlers.ts";

export const blockRoutes = new Hono<AppEnv>()
  .get("/:agent/blocks", validate("query", blocksQuery), (c) => {
    const { active, limit } = c.req.valid("query");
    return h.getBlocks(c, c.req.param("agent"), active === "true", limit);
  })
  .delete("/:agent/blocks/:id", validate("param", blockParam), (c) => h.deleteBlock(c, c.req.param("agent"), c.req.valid("param").id));
