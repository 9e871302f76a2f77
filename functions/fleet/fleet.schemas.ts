/** Request shapes of the fleet routes; handlers get these parsed and typed. */
import { z } from "zod";
import { FAILURE_KINDS } from "../../fleet/simulated-failures.ts";

export const instanceParam = z.object({ id: z.string().regex(/^[\w.:-]{1,128}$/, "must be 1-128 word characters") });

export const instanceEventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const failBody = z.object({
  kind: z.enum(FAILURE_KINDS, {
    error: `must be one of ${FAILURE_KINDS.join(", ")}`,
  }),
});
