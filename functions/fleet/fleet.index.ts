/**
 * Wiring of the fleet routes, mounted inside /api (behind admin auth):
 * GET /agents/:agent/instances, GET /agents/:agent/instances/:id/events,
 * POST /agents/:agent/instances/:id/actions (an operator's own action) and
 * POST /simulator/instances/:id/fail.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { agentParam } from "../../jobs/agent-requests.ts";
import { failBody, instanceActionBody, instanceEventsQuery, instanceParam } from "./fleet.schemas.ts";
import * as h from "./fleet.handlers.ts";

const agentInstanceParam = agentParam.extend(instanceParam.shape);

export const fleetRoutes = new Hono<AppEnv>()
  .get("/agents/:agent/instances", validate("param", agentParam), (c) => h.getInstances(c, c.req.valid("param").agent))
  .get("/agents/:agent/instances/:id/events", validate("param", agentInstanceParam), validate("query", instanceEventsQuery), (c) => {
    const { agent, id } = c.req.valid("param");
    return h.getInstanceEvents(c, agent, id, c.req.valid("query").limit);
  })
  .post("/agents/:agent/instances/:id/actions", validate("param", agentInstanceParam), validate("json", instanceActionBody), (c) => {
    const { agent, id } = c.req.valid("param");
    return h.postInstanceAction(c, agent, id, c.req.valid("json"));
  })
  .post("/simulator/instances/:id/fail", validate("param", instanceParam), validate("json", failBody), (c) =>
    h.postFailure(c, c.req.valid("param").id, c.req.valid("json").kind),
  );
