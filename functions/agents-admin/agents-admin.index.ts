/**
 * Wiring of the agents API: POST/GET /api/agents, PATCH/DELETE /api/agents/:agent and
 * POST /api/agents/:agent/restore, POST /api/agents/:agent/webhook-secret (rotate). Reading needs viewer (the API default); creating, changing,
 * archiving and restoring need admin.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { requireRole } from "../../auth/require-role.ts";
import { validate } from "../../jobs/validate.ts";
import { createAgentBody, patchAgentBody } from "../../jobs/agent-admin-requests.ts";
import * as h from "./agents-admin.handlers.ts";

const admin = requireRole("admin");

export const agentAdminRoutes = new Hono<AppEnv>()
  .post("/", admin, validate("json", createAgentBody), (c) => h.postAgent(c, c.req.valid("json")))
  .get("/", (c) => h.getAgents(c))
  .patch("/:agent", admin, validate("json", patchAgentBody), (c) => h.patchAgent(c, c.req.param("agent"), c.req.valid("json")))
  .delete("/:agent", admin, (c) => h.deleteAgent(c, c.req.param("agent")))
  .post("/:agent/restore", admin, (c) => h.postRestore(c, c.req.param("agent")))
  .post("/:agent/webhook-secret", admin, (c) => h.postWebhookSecret(c, c.req.param("agent")));
