/** Request shapes of the actions audit routes. */
import { z } from "zod";

export const actionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .regex(/^[1-9]\d{0,15}$/, "must be the nextCursor of a previous page (a positive integer)")
    .transform(Number)
    .optional(),
  format: z.enum(["json", "csv", "jsonl"], { error: "must be json, csv or jsonl" }).default("json"),
});
