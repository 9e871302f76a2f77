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
 * The docs' test delivery (`webhook_test`) is answered and writes nothing. An event id is bound
 * to the agent that first stored it: replayed onto another agent's route it is a 409.
 */
import { and, eq, inArray, ne, sql } from "drizzle-orm";
import { z } from "zod";
import type { FleetDeps } from "../deps.ts";
import { agents, events } from "../../schema/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { RequestError } from "../../runtime/errors.ts";
import { toPlainText } from "../../runtime/plain-text.ts";
import { vastSignatureProblem } from "./vast-signature.ts";

/** Stored lengths of Vast.ai's free text; the docs set none, so longer text is cut, never refused. */
const SUBJECT_MAX = 500;
const MESSAGE_MAX = 4000;

/** Free text as Vast.ai sends it, made plain (control characters to spaces) and cut to `max` with an ellipsis. */
const vastText = (max: number) =>
  z.string().transform((text) => {
    const plain = toPlainText(text);
    return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
  });

/**
 * The documented payload; unknown fields are dropped. A 400 is a permanent failure for Vast.ai
 * (the event is lost), so only what cannot be a notification is refused: the body's event_id
 * may differ from the header's (the header is the dedup key) and long text is cut.
 */
export const vastNotification = z.object({
  event_id: z
    .string()
    .trim()
    .min(1)
    .transform((id) => id.slice(0, 256)),
  user_id: z.number().int().optional(),
  notif_type: z
    .string()
    .trim()
    .min(1)
    .max(128)
    .regex(/^[a-z0-9_:.-]+$/, "must be a notification type slug"),
  subject: vastText(SUBJECT_MAX).optional(),
  message: vastText(MESSAGE_MAX).optional(),
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

/** A verified notification; `eventId` is the header's X-Vast-Event-Id, the dedup key. */
export type VastNotification = z.infer<typeof vastNotification> & { eventId: string };
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
  return { ...parsed.data, eventId: delivery.eventId };
}

/** Stores a verified notification once per event id, giving the agent's reconcile turn back with it. */
export async function storeVastNotification(deps: FleetDeps, agentId: string, body: VastNotification): Promise<VastReceipt> {
  if (body.notif_type === VAST_TEST_EVENT) return { test: true };
  await refuseOtherAgentsEvent(deps, agentId, body.eventId);
  // Runs right after the insert and its stored row's read: changes() still names the insert.
  const giveBackTurn = deps.db.run(sql`update ${agents} set last_reconciled_at = null where id = ${agentId} and changes() = 1`);
  return ingestEvent(
    deps,
    {
      agentId,
      source: "vast_notification",
      priority: 1,
      dedupKey: vastDedupKey(body.eventId),
      payload: {
        vastEventId: body.eventId,
        ...(body.event_id !== body.eventId ? { bodyEventId: body.event_id } : {}),
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

const vastDedupKey = (eventId: string) => `vast:${eventId}`;

/**
 * Binds an event id to the first agent that stored it (one Vast.ai webhook points at one agent's
 * route): the same event on another agent's route is a replay of a delivery signed with the
 * deployment's one secret, refused 409 with nothing written. One read through events_dedup, one
 * probe per agent (the agents subquery leads the index).
 */
async function refuseOtherAgentsEvent(deps: FleetDeps, agentId: string, eventId: string): Promise<void> {
  const [owner] = await deps.db
    .select({ agentId: events.agentId })
    .from(events)
    .where(
      and(
        inArray(events.agentId, deps.db.select({ id: agents.id }).from(agents)),
        eq(events.dedupKey, vastDedupKey(eventId)),
        ne(events.agentId, agentId),
      ),
    )
    .limit(1);
  if (owner) {
    throw new RequestError(
      409,
      `Vast.ai event ${eventId} belongs to agent ${owner.agentId}: a replay onto agent ${agentId}'s route is refused, nothing stored`,
    );
  }
}
