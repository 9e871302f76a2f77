/**
 * Vast.ai's own notifications (vast-ai/docs guides/reference/notification-webhooks.mdx) as inbox
 * events, taken as hints and never as facts. The signature is checked on the raw body before it is
 * parsed (fleet/providers/vast-signature.ts); the event is stored once per `X-Vast-Event-Id` (dedup key
 * `vast:<id>`) with source `vast_notification`, so the prompt shows it in the <events> data block.
 * The documented payload names no instance (event_id, user_id, notif_type, subject, message,
 * timestamp), so no instance filter can apply and nothing is claimed about an instance: in the
 * same batch, and only when the event was stored, the agent's reconcile turn is given back
 * (last_reconciled_at cleared), so the next cron tick re-reads every instance from the provider
 * and any real change arrives as an instance event of its own. Bound: one stored event and one
 * turn given back per event id; however many hints arrive, the tick claims one reconcile turn.
 * The docs' test delivery (`webhook_test`) is answered and writes nothing.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { FleetDeps } from "../deps.ts";
import { agents } from "../../schema/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { RequestError } from "../../runtime/errors.ts";
import { plainText } from "../../runtime/plain-text.ts";
import { vastSignatureProblem } from "./vast-signature.ts";

/** The documented payload; unknown fields are dropped. */
export const vastNotification = z.object({
  event_id: z.string().trim().min(1).max(256),
  user_id: z.number().int().optional(),
  notif_type: z
    .string()
    .trim()
    .min(1)
    .max(128)
    .regex(/^[a-z0-9_:.-]+$/, "must be a notification type slug"),
  subject: plainText(z.string().max(500)).optional(),
  message: plainText(z.string().max(4000)).optional(),
  timestamp: z.number().optional(),
});

/** The docs' test delivery's type: answered, never stored. */
export const VAST_TEST_EVENT = "webhook_test";

/** What the agent is told the event is: data, with the rule it is handled by. */
export const VAST_HINT_NOTE =
  "Vast.ai notification: a hint, not the instance's state; every instance is re-read from the provider on the next tick, and get_instance reads one now";

export interface VastDelivery {
  raw: string;
  eventId: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

export type VastNotification = z.infer<typeof vastNotification>;
export type VastReceipt = { test: true } | { eventId: number; duplicate: boolean };

/** Verifies and parses one delivery, reading nothing; a RequestError names what was refused. */
export async function verifyVastDelivery(secret: string | undefined, delivery: VastDelivery, nowMs: number): Promise<VastNotification> {
  if (!secret) throw new RequestError(503, "Vast.ai webhooks are disabled: VAST_WEBHOOK_SECRET is not configured");
  const problem = await vastSignatureProblem(secret, delivery, delivery.raw, nowMs);
  if (problem) throw new RequestError(401, `Vast.ai signature rejected: ${problem}`);
  if (!delivery.eventId) throw new RequestError(401, "Vast.ai signature rejected: missing header X-Vast-Event-Id");
  if (delivery.eventId.length > 256) throw new RequestError(400, "invalid header X-Vast-Event-Id: longer than 256 characters");
  let json: unknown;
  try {
    json = JSON.parse(delivery.raw);
  } catch {
    throw new RequestError(400, "invalid body: not JSON");
  }
  const parsed = vastNotification.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RequestError(400, `invalid body: ${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  if (parsed.data.event_id !== delivery.eventId)
    throw new RequestError(400, "invalid body: event_id: differs from the X-Vast-Event-Id header");
  return parsed.data;
}

/** Stores a verified notification once per event id, giving the agent's reconcile turn back with it. */
export async function storeVastNotification(deps: FleetDeps, agentId: string, body: VastNotification): Promise<VastReceipt> {
  if (body.notif_type === VAST_TEST_EVENT) return { test: true };
  // Runs right after the insert and its stored row's read: changes() still names the insert.
  const giveBackTurn = deps.db.run(sql`update ${agents} set last_reconciled_at = null where id = ${agentId} and changes() = 1`);
  return ingestEvent(
    deps,
    {
      agentId,
      source: "vast_notification",
      priority: 1,
      dedupKey: `vast:${body.event_id}`,
      payload: {
        vastEventId: body.event_id,
        notifType: body.notif_type,
        subject: body.subject ?? null,
        message: body.message ?? null,
        vastTimestamp: body.timestamp ?? null,
        note: VAST_HINT_NOTE,
      },
    },
    giveBackTurn,
  );
}
