/**
 * schedule_next_check and cancel_wake: the agent's own future checks. The floor and the hourly
 * budget are scheduleSelfWake's (pipeline/wake-budget.ts), the pending-wake cap createWake's;
 * a raised delay is said in the result, and a refusal is an error result the model can act on.
 */
import { z } from "zod";
import { INSTANCE_STATES } from "../../fleet/providers/provider.ts";
import { scheduleSelfWake, WakeBudgetError } from "../../pipeline/index.ts";
import { cancelWake, WakeLimitError } from "../../pipeline/index.ts";
import { defineTool, instanceId, toolError } from "./tool.ts";

const MAX_DELAY_S = 7 * 24 * 3600;

export const scheduleNextCheckTool = defineTool({
  name: "schedule_next_check",
  description: "Schedule a future run of yourself: give either in_seconds or at (ISO 8601), and the reason you will see then.",
  schema: z
    .object({
      in_seconds: z.number().int().min(1).max(MAX_DELAY_S).optional(),
      at: z.iso.datetime({ offset: true }).optional().describe("ISO 8601 time, e.g. 2026-01-01T12:00:00Z"),
      reason: z.string().trim().min(1, "must not be empty").max(500),
      instance_id: instanceId.optional().describe("The instance this check is about, if one"),
      expect_state: z.enum(INSTANCE_STATES).optional().describe("The state that instance should be in by then"),
    })
    .strict()
    .refine((a) => (a.in_seconds === undefined) !== (a.at === undefined), { message: "give exactly one of in_seconds or at" }),
  async run({ deps, agentId, runId, fence }, args) {
    const now = deps.clock.now();
    const dueAt = args.in_seconds !== undefined ? now + args.in_seconds * 1000 : Date.parse(args.at!);
    if (dueAt <= now) return toolError(`at must be in the future (now is ${new Date(now).toISOString()})`);
    if (dueAt > now + MAX_DELAY_S * 1000) return toolError("at must be within 7 days");
    try {
      const wake = await scheduleSelfWake(deps, agentId, {
        dueAt,
        reason: args.reason,
        createdByRun: runId,
        fence,
        ...(args.instance_id ? { instanceId: args.instance_id } : {}),
        ...(args.expect_state ? { awaitState: args.expect_state } : {}),
      });
      const floorS = deps.config.wakeMinDelayMs / 1000;
      const note =
        wake.raisedFrom !== undefined ? `raised to the minimum delay of ${floorS}s (WAKE_MIN_DELAY_S); checks cannot be sooner` : undefined;
      return {
        output: {
          wakeId: wake.id,
          dueAt: new Date(wake.dueAt).toISOString(),
          ...(note ? { note } : {}),
          checksLeftThisHour: wake.budgetLeft,
        },
        mutated: true,
      };
    } catch (err) {
      if (err instanceof WakeLimitError || err instanceof WakeBudgetError) return toolError(err.message);
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
