/**
 * schedule_next_check and cancel_wake: the agent's own future checks. The pending-wake cap is
 * enforced by createWake; hitting it is an error result the model can act on (cancel one).
 */
import { z } from "zod";
import { cancelWake, createWake, WakeLimitError } from "../../triggers/wakes.ts";
import { defineTool, toolError } from "./tool.ts";

const MAX_DELAY_S = 7 * 24 * 3600;

export const scheduleNextCheckTool = defineTool({
  name: "schedule_next_check",
  description: "Schedule a future run of yourself: give either in_seconds or at (ISO 8601), and the reason you will see then.",
  schema: z
    .object({
      in_seconds: z.number().int().min(1).max(MAX_DELAY_S).optional(),
      at: z.iso.datetime({ offset: true }).optional().describe("ISO 8601 time, e.g. 2026-01-01T12:00:00Z"),
      reason: z.string().trim().min(1, "must not be empty").max(500),
    })
    .strict()
    .refine((a) => (a.in_seconds === undefined) !== (a.at === undefined), { message: "give exactly one of in_seconds or at" }),
  async run({ deps, agentId, runId, fence }, args) {
    const now = deps.clock.now();
    const dueAt = args.in_seconds !== undefined ? now + args.in_seconds * 1000 : Date.parse(args.at!);
    if (dueAt <= now) return toolError(`at must be in the future (now is ${new Date(now).toISOString()})`);
    if (dueAt > now + MAX_DELAY_S * 1000) return toolError("at must be within 7 days");
    try {
      const wake = await createWake(deps, agentId, { dueAt, reason: args.reason, createdByRun: runId, fence });
      return { output: { wakeId: wake.id, dueAt: new Date(wake.dueAt).toISOString() }, mutated: true };
    } catch (err) {
      if (err instanceof WakeLimitError) return toolError(err.message);
      throw err;
    }
  },
});

export const cancelWakeTool = defineTool({
  name: "cancel_wake",
  description: "Cancel one of your pending scheduled checks by id.",
  schema: z.object({ id: z.number().int().positive() }).strict(),
  async run({ deps, agentId, fence }, args) {
    const cancelled = await cancelWake(deps, agentId, args.id, fence);
    return cancelled ? { output: { cancelled: true }, mutated: true } : toolError(`no pending wake with id ${args.id}`);
  },
});
