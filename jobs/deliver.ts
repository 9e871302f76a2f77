/**
 * The one entry for scheduled deliveries, whichever scheduler carried them (the local timer
 * calls it in-process; QStash reaches it through POST /internal/deliveries). Every handler is
 * idempotent, because both schedulers deliver at least once.
 */
import { z } from "zod";
import type { Deps } from "./deps.ts";
import { deliverNotification } from "../notify/deliver-notification.ts";
import { performRun } from "../pipeline/index.ts";
import type { DeliveryBody } from "../pipeline/index.ts";
import { handleWakeDelivery } from "../pipeline/index.ts";
import { agentTick } from "../pipeline/index.ts";
import { FLEET_CHECKS } from "./tick.ts";
import { withAgent } from "./with-agent.ts";
import { deliverSlackDecision } from "./slack-interaction.ts";

export const deliveryBodySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("run"), agentId: z.string().min(1).max(64), slot: z.number().int().nonnegative() }),
  z.object({ type: z.literal("wake"), agentId: z.string().min(1).max(64), wakeId: z.number().int().positive() }),
  z.object({ type: z.literal("notify"), agentId: z.string().min(1).max(64), deliveryId: z.number().int().positive() }),
  z.object({ type: z.literal("tick"), agentId: z.string().min(1).max(64) }),
  z.object({
    type: z.literal("slack-decision"),
    agentId: z.string().min(1).max(64),
    approvalId: z.number().int().positive(),
    decision: z.enum(["approve", "reject"]),
    slackUser: z.string().min(1).max(64),
    responseUrl: z.string().max(2000).nullable(),
  }),
]);

/**
 * Every delivery runs with its agent's settings (jobs/with-agent.ts). An archived agent's
 * runs, wakes and ticks are acknowledged and do nothing; a notification it decided before being
 * archived is still sent.
 */
export async function handleDelivery(deps: Deps, body: DeliveryBody): Promise<string> {
  const scope = await withAgent(deps, body.agentId);
  if (!scope) return "unknown agent";
  // A click on an archived agent's approval is answered (the clicker is told), never dropped.
  if (body.type === "slack-decision") return deliverSlackDecision(scope.deps, scope.archived, body);
  if (scope.archived && body.type !== "notify") return "archived";
  const agentDeps = scope.deps;
  switch (body.type) {
    case "run":
      return performRun(agentDeps, body.agentId, body.slot);
    case "wake":
      return handleWakeDelivery(agentDeps, body.agentId, body.wakeId);
    case "notify":
      await deliverNotification(agentDeps, body.deliveryId);
      return "notified";
    case "tick":
      await agentTick(agentDeps, body.agentId, FLEET_CHECKS);
      return "ticked";
  }
}
