/**
 * The instance reporter's routes. GET /reporter.sh (public: the script holds no secret) serves
 * reporter/reporter.sh as embedded by docs/generate.ts. Inside /api:
 * GET /agents/:agent/instances/:id/reporter answers { key, env, command } for that instance
 * (jobs/reporter/reporter-setup.ts); operator role although it is a read, since it reveals a key.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { agentParam } from "../../jobs/agent-requests.ts";
import { REPORTER_SCRIPT } from "../../jobs/reporter/reporter-script.ts";
import { reporterSetup } from "../../jobs/reporter/reporter-setup.ts";
import { requireRole } from "../../auth/require-role.ts";
import { instanceParam } from "../fleet/fleet.schemas.ts";

export const reporterScriptRoutes = new Hono<AppEnv>().get("/reporter.sh", (c) =>
  c.body(REPORTER_SCRIPT, 200, { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "public, max-age=300" }),
);

export const reporterRoutes = new Hono<AppEnv>().get(
  "/agents/:agent/instances/:id/reporter",
  requireRole("operator"),
  validate("param", agentParam.extend(instanceParam.shape)),
  async (c) => {
    const { agent, id } = c.req.valid("param");
    const setup = await reporterSetup(c.get("deps"), c.get("operator"), {
      agentId: agent,
      instanceId: id,
      origin: new URL(c.req.url).origin,
    });
    // The answer carries a key: never stored by a cache on the way.
    c.header("cache-control", "no-store");
    return c.json(setup);
  },
);
