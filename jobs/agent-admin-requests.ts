/** Request shapes of the agents API (create, update); settings validated like configuration. */
import { z } from "zod";
import { agentSettingsSchema } from "../runtime/agent-settings.ts";
import { agentParam } from "./agent-requests.ts";

const name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

export const createAgentBody = z
  .object({ id: agentParam.shape.agent, name: name.optional(), settings: agentSettingsSchema.default({}) })
  .strict();

/**
 * A PATCH replaces `settings` as a whole (send the full settings object) and/or the name; a channel
 * URL sent back exactly as the API showed it (masked) keeps the stored one.
 */
export const patchAgentBody = z
  .object({ name: name.optional(), settings: agentSettingsSchema.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.settings !== undefined, "must change name or settings");
