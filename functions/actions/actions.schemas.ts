/** Request shapes of the actions audit routes. */
import { z } from "zod";

export const actionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
