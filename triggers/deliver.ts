/**
 * The one entry for scheduled deliveries, whichever scheduler carried them (the local timer
 * calls it in-process; QStash reaches it through POST /internal/deliveries). Every handler is
 * idempotent, because both schedulers deliver at least once.
 */
import { z } from "zod";
import type { Deps } from "../runtime/deps.ts";
import { deliverNotification } from "../notify/deliver-notification.ts";
import { performRun } from "./perform-run.ts";
import type { DeliveryBody } from "./scheduler.ts";
import { handleWakeDelivery } from "./wakes.ts";

export const deliveryBodySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("run"), agentId: z.string().min(1).max(64), slot: z.number().int().nonnegative() }),
  z.object({ type: z.literal("wake"), agentId: z.string().min(1).max(64), wakeId: z.number().int().positive() }),
  z.object({ type: z.literal("notify"), agentId: z.string().min(1).max(64), deliveryId: z.number().int().positive() }),
]);

export async function handleDelivery(deps: Deps, body: DeliveryBody): Promise<string> {
  switch (body.type) {
    case "run":
      return performRun(deps, body.agentId, body.slot);
    case "wake":
      return handleWakeDelivery(deps, body.agentId, body.wakeId);
    case "notify":
      await deliverNotification(deps, body.deliveryId);
      return "notified";
  }
}
