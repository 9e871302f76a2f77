/** notify_human: tell a person (stored, listed, and sent to the configured channels; deduplicated; bounded per run and hour). */
import { z } from "zod";
import { notifyHuman } from "../../notify/notify-human.ts";
import { RESERVED_DEDUP_PREFIXES } from "../../notify/notification-bounds.ts";
import { defineTool, instanceId } from "./tool.ts";

export const notifyHumanTool = defineTool({
  name: "notify_human",
  description: "Notify a human operator. Repeats of the same alert (same dedup_key, or same title) within a window are folded into one.",
  schema: z
    .object({
      title: z.string().trim().min(1, "must not be empty").max(200),
      body: z.string().trim().min(1, "must not be empty").max(4000),
      severity: z.enum(["info", "warning", "critical"]),
      dedup_key: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .refine(
          (key) => !RESERVED_DEDUP_PREFIXES.some((p) => key.toLowerCase().startsWith(p)),
          `must not start with ${RESERVED_DEDUP_PREFIXES.join(" or ")} (reserved)`,
        )
        .optional()
        .describe("Identifies the same alert across runs"),
      instance_id: instanceId.optional().describe("The instance this is about, if one"),
    })
    .strict(),
  async run({ deps, agentId, runId, fence }, args) {
    const result = await notifyHuman(deps, {
      agentId,
      runId,
      title: args.title,
      body: args.body,
      severity: args.severity,
      ...(args.dedup_key ? { dedupKey: args.dedup_key } : {}),
      fence,
      ...(args.instance_id ? { instanceId: args.instance_id } : {}),
    });
    // A refusal (a run or hour bound) says why in `refused`; nothing was stored or sent.
    return { output: result, mutated: !result.deduplicated && !result.refused };
  },
});
