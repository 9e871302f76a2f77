/**
 * The database refusing for its plan (Turso's `BLOCKED` past the quota, `SQLITE_FULL` over its
 * size: db/quota-refusal.ts) is never silent (issue #37, item 4). Nothing can be recorded in a
 * database that refuses writes (no notification row, no once-mark, no watchdog row), so this keeps
 * what it knows in the process's memory and tells a human straight through the channels the
 * deployment's environment configures (SLACK_WEBHOOK_URL, DISCORD_WEBHOOK_URL, NTFY_URL), never
 * through the notification table or the scheduler.
 *
 * Bound: one notice per process per database per hour (the in-memory `toldAt`, set before the
 * send so concurrent checks do not both tell); at most MAX_TRACKED databases are remembered (a
 * deployment has one). A successful write (the health probe) forgets the refusal, so a new one
 * later is told again.
 */
import type { PipelineDeps } from "../pipeline/index.ts";
import { quotaRefusal } from "../db/quota-refusal.ts";
import { CHANNEL_TIMEOUT_MS } from "./channels/channel.ts";
import { sendToChannel } from "./channels/send-to-channel.ts";
import { configuredChannels } from "./notify-human.ts";

export const DATABASE_REFUSAL_NOTICE_MS = 3_600_000;
const MAX_TRACKED = 16;

export interface DatabaseRefusal {
  /** `BLOCKED: …` or `SQLITE_FULL: …`, as the database said it. */
  reason: string;
  since: number;
  lastSeen: number;
  toldAt: number | null;
}

type RefusalDeps = Pick<PipelineDeps, "config" | "clock" | "log">;

const refusals = new Map<string, DatabaseRefusal>();

/** What this process knows of its database refusing for quota or size, or null. */
export function databaseRefusal(deps: Pick<PipelineDeps, "config">): DatabaseRefusal | null {
  return refusals.get(deps.config.databaseUrl) ?? null;
}

/** A write succeeded: the refusal is over (a later one is told again). */
export function databaseWritable(deps: Pick<PipelineDeps, "config">): void {
  refusals.delete(deps.config.databaseUrl);
}

/**
 * Looks at a database error: when it is a quota or size refusal it is remembered and told (once an
 * hour), and its reason returned; any other error returns null and changes nothing.
 */
export async function noteDatabaseError(deps: RefusalDeps, err: unknown): Promise<string | null> {
  const reason = quotaRefusal(err);
  if (!reason) return null;
  const now = deps.clock.now();
  const key = deps.config.databaseUrl;
  let known = refusals.get(key);
  if (!known) {
    if (refusals.size >= MAX_TRACKED) refusals.delete(refusals.keys().next().value!);
    known = { reason, since: now, lastSeen: now, toldAt: null };
    refusals.set(key, known);
  }
  known.reason = reason;
  known.lastSeen = now;
  if (known.toldAt !== null && now - known.toldAt < DATABASE_REFUSAL_NOTICE_MS) return reason;
  known.toldAt = now;
  deps.log.error("the database refuses writes for its plan's quota or size", { reason });
  await tellDirectly(deps, known);
  return reason;
}

async function tellDirectly(deps: RefusalDeps, refusal: DatabaseRefusal): Promise<void> {
  const message = {
    title: "The database refuses writes (quota or size)",
    body:
      `Since ${new Date(refusal.since).toISOString()} the database answers ${refusal.reason}. ` +
      "Nothing fleetwarden decides, reports or schedules can be stored until it accepts writes again: " +
      "raise the Turso plan (or its usage limit) or free space; /healthz answers 503 until then. " +
      "This notice was sent directly, once an hour at most, because the database cannot record it.",
    severity: "critical" as const,
  };
  await Promise.all(
    configuredChannels(deps).map((channel) =>
      sendToChannel(channel, deps.config.channels[channel]!, message, CHANNEL_TIMEOUT_MS, {
        discordThreadName: deps.config.discordThreadName,
      }).catch((err: unknown) => deps.log.error("could not tell the database refusal", { channel, error: String(err) })),
    ),
  );
}
