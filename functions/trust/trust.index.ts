/** Wiring of /api/agents/:agent/memory, /runs/:runId/llm-calls and /runs/:runId/replay. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { agentParam } from "../../jobs/agent-requests.ts";
import { validate } from "../../jobs/validate.ts";
import { memoryKeyParam, replayBody, runParam } from "./trust.schemas.ts";
import * as h from "./trust.handlers.ts";

export const trustRoutes = new Hono<AppEnv>()
  .get("/:agent/memory", validate("param", agentParam), (c) => h.getMemory(c, c.req.valid("param").agent))
  .delete("/:agent/memory/:key", validate("param", memoryKeyParam), (c) =>
    h.deleteMemory(c, c.req.valid("param").agent, c.req.valid("param").key),
  )
  .get("/:agent/runs/:runId/llm-calls", validate("param", runParam), (c) =>
    h.getLlmCalls(c, c.req.valid("param").agent, c.req.valid("param").runId),
  )
  .post("/:agent/runs/:runId/replay", validate("param", runParam), validate("json", replayBody), (c) =>
    h.postReplay(c, c.req.valid("param").agent, c.req.valid("param").runId, c.req.valid("json").model),
  );
