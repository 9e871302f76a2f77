/** GET /healthz, without auth: is the database reachable, and which adapters are in use. */
import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import { pingDatabase } from "../../db/client.ts";
import { describeLlm } from "../../agent/llm-health.ts";

export const healthRoutes = new Hono<AppEnv>().get("/healthz", async (c) => {
  const deps = c.get("deps");
  const db = await pingDatabase(deps.db);
  return c.json(
    {
      ok: db,
      db: db ? "ok" : "unreachable",
      scheduler: deps.scheduler.kind,
      llm: await describeLlm(deps, db),
      provider: deps.provider.kind,
      simulated: deps.provider.kind === "simulator",
    },
    db ? 200 : 503,
  );
});
