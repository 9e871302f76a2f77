/** Request shapes of the agent routes; handlers get these parsed and typed. */
import { z } from "zod";
import { plainText } from "../runtime/plain-text.ts";

/** An agent id, as every route's `:agent` must be. */
export const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const AGENT_ID_RULE = "must be 1-64 letters, digits, - or _";

export const agentParam = z.object({ agent: z.string().regex(AGENT_ID, AGENT_ID_RULE) });

export const messageBody = z.object({
  text: plainText(z.string().trim().min(1, "must not be empty").max(8000, "must be at most 8000 characters")),
});

export const triggerBody = z.object({
  reason: plainText(z.string().trim().max(500, "must be at most 500 characters")).optional(),
});

/** Optional body of a session reset: `clearMemory` also deletes the agent's pinned facts. */
export const resetBody = z.object({ clearMemory: z.boolean().optional() }).strict();

export const runsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(20),
});

export const wakesQuery = z.object({
  status: z.enum(["pending", "consumed", "cancelled", "dropped"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const eventsQuery = z.object({
  status: z.enum(["pending", "consumed", "dropped"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** Optional client-chosen id that makes a chat message or trigger idempotent. */
export const idempotencyKey = z.string().regex(/^[\w.:-]{1,128}$/, "must be 1-128 word characters");
