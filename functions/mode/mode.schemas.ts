/** Request shape of POST /api/agents/:agent/mode. */
import { z } from "zod";

export const modeBody = z.object({ mode: z.enum(["act", "shadow"]) }).strict();
