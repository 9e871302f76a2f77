/**
 * Wiring of /api/agents/:agent/fleet-breaker/lift: POST (operator, the API's default for writes)
 * lifts the open fleet breaker's hold for its episode (jobs/lift-fleet-breaker.ts). No body.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { liftFleetBreakerAsOperator } from "../../jobs/lift-fleet-breaker.ts";

export const fleetBreakerRoutes = new Hono<AppEnv>().post("/:agent/fleet-breaker/lift", async (c) =>
  c.json(await liftFleetBreakerAsOperator(c.get("deps"), c.get("operator"), c.req.param("agent"))),
);
