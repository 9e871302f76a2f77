/** Request shapes of the block routes. */
import { z } from "zod";
import { agentParam } from "../../jobs/agent-requests.ts";

export const blocksQuery = z.object({
  active: z.enum(["true", "false"]).default("true"),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const blockParam = agentParam.extend({ id: z.coerce.number().int().positive() });
