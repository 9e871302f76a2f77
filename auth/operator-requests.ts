/** Request shapes of /api/operators. */
import { z } from "zod";
import { ROLES } from "./roles.ts";

export const operatorName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][\w.@-]{0,63}$/, "must be 1-64 letters, digits, or . _ @ - (starting with a letter or digit)");

export const newOperatorBody = z.object({
  name: operatorName,
  role: z.enum(ROLES, `must be one of ${ROLES.join(", ")}`),
});

export const operatorParam = z.object({ id: z.coerce.number().int().positive("must be a positive operator id") });
