/** Request shapes of /api/operators. */
import { z } from "zod";
import { ROLES } from "./roles.ts";

export const operatorName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][\w.@-]{0,63}$/, "must be 1-64 letters, digits, or . _ @ - (starting with a letter or digit)");

/** A Slack user id as Slack writes them: U… (or W… on Enterprise Grid), upper-case letters and digits. */
export const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,}$/, "must be a Slack user id such as U024BE7LH");
const role = z.enum(ROLES, `must be one of ${ROLES.join(", ")}`);

export const newOperatorBody = z.object({
  name: operatorName,
  role,
  slackUserId: slackUserId.optional(),
});

export const operatorChangeBody = z
  .strictObject({ slackUserId: slackUserId.nullable().optional(), role: role.optional() })
  .refine((b) => b.slackUserId !== undefined || b.role !== undefined, "give slackUserId (or null to unmap it) or role")
  // The refinement in JSON Schema terms, for the API's description (jobs/openapi/).
  .meta({ minProperties: 1 });

export const operatorParam = z.object({ id: z.coerce.number().int().positive("must be a positive operator id") });
