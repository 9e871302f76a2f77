/** Wiring of /api/agents/:agent/* : schema → handler, one line each. */
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { optionalBody, parseJsonBody, validate } from "../../jobs/validate.ts";
import { agentParam, eventsQuery, messageBody, resetBody, runsQuery, triggerBody, wakesQuery } from "../../jobs/agent-requests.ts";
import * as h from "./agents.handlers.ts";

const runParam = agentParam.extend({ runId: z.coerce.number().int().positive() });

export const agentRoutes = new Hono<AppEnv>()
  .get("/:agent", (c) => h.getState(c, c.req.param("agent")))
  .post("/:agent/messages", validate("json", messageBody), (c) => h.postMessage(c, c.req.param("agent"), c.req.valid("json").text))
  .post("/:agent/trigger", validate("json", triggerBody), (c) => h.postTrigger(c, c.req.param("agent"), c.req.valid("json").reason))
  // The body is optional (an empty one resets the session only).
  .post("/:agent/session/reset", optionalBody(resetBody), async (c) => {
    const raw = await c.req.text();
    return h.postReset(c, c.req.param("agent"), raw.trim() === "" ? {} : parseJsonBody(raw, resetBody));
  })
  .get("/:agent/runs", validate("query", runsQuery), (c) => h.getRuns(c, c.req.param("agent"), c.req.valid("query").limit))
  .get("/:agent/runs/:runId", validate("param", runParam), (c) => h.getOneRun(c, c.req.param("agent"), c.req.valid("param").runId))
  .get("/:agent/wakes", validate("query", wakesQuery), (c) => {
    const { status, limit } = c.req.valid("query");
    return h.getWakes(c, c.req.param("agent"), status, limit);
  })
  .get("/:agent/events", validate("query", eventsQuery), (c) => {
    const { status, limit } = c.req.valid("query");
    return h.getEvents(c, c.req.param("agent"), status, limit);
  })
  .get("/:agent/conversation", (c) => h.getConversation(c, c.req.param("agent")));
