/** Wiring of /api/agents/:agent/approvals. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { approvalParam, approvalsQuery, decisionBody } from "./approvals.schemas.ts";
import * as h from "./approvals.handlers.ts";

export const approvalRoutes = new Hono<AppEnv>()
  .get("/:agent/approvals", validate("query", approvalsQuery), (c) => {
    const { status, limit } = c.req.valid("query");
    return h.getApprovals(c, c.req.param("agent"), status, limit);
  })
  .post("/:agent/approvals/:id", validate("param", approvalParam), validate("json", decisionBody), (c) => {
    const { decision, note } = c.req.valid("json");
    return h.postDecision(c, c.req.param("agent"), c.req.valid("param").id, decision, note);
  });
