/**
 * The one entry for scheduled deliveries, whichever scheduler carried them (the local timer
 * calls it in-process; QStash reaches it through POST /internal/deliveries). Every handler is
 * idempotent, because both schedulers deliver at least once.
 */
import { z } from "zod";
import type { Deps } from "../runtime/deps.ts";
import { performRun } from "./perform-run.ts";
import type { DeliveryBody } from "./scheduler.ts";
import { handleWakeDelivery } from "./wakes.ts";

export const deliveryBodySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("run"), agentId: z.string().min(1).max(64), slot: z.number().int().nonnegative() }),
  z.object({ type: z.literal("wake"), agentId: z.string().min(1).max(64), wakeId: z.number().int().positive() }),
  z.object({ type: z.literal("notify"), deliveryId: z.number().int().positive() }),
]);

/** Handlers for delivery kinds owned outside the pipeline (notifications), set by the wiring. */
export type NotifyHandler = (deps: Deps, deliveryId: number) => Promise<unknown>;

export async function handleDelivery(deps: Deps, body: DeliveryBody, notify?: NotifyHandler): Promise<string> {
  switch (body.type) {
    case "run":
      return performRun(deps, body.agentId, body.slot);
    case "wake":
      return handleWakeDelivery(deps, body.agentId, body.wakeId);
    case "notify":
      if (!notify) throw new Error("no notification handler is wired");
      await notify(deps, body.deliveryId);
      return "notified";
  }
}
