/** Request shapes of the notification routes. */
import { z } from "zod";

export const notificationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
