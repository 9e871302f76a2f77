/** Request shapes of the trust routes: memory facts, a run's LLM calls, a replay. */
import { z } from "zod";
import { agentParam } from "../../jobs/agent-requests.ts";

export const memoryKeyParam = agentParam.extend({ key: z.string().regex(/^[\w.:-]{1,64}$/, "must be 1-64 letters, digits, _ . : or -") });

export const runParam = agentParam.extend({ runId: z.coerce.number().int().positive() });

export const replayBody = z
  .object({
    model: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(200, "must be at most 200 characters")
      .regex(/^[\w./:@-]+$/, "must be a model name (letters, digits, _ . / : @ -)")
      .optional(),
  })
  .strict();
