/**
 * When the daily digest (fleet/economics/digest.ts) goes out: the first tick at or after
 * DIGEST_HOUR_UTC of each UTC day, for an agent that set the hour (unset: never).
 *
 * What bounds it: the once-mark `digest:day:<UTC day>` (fleet/tell-once.ts), read in the tick's
 * snapshot by its primary key and written with the notice in one batch: one digest per agent per
 * UTC day, whichever tick or host gets there first; a host that was down at the hour sends it at
 * its next tick that day, still once. The notice goes through the notification dedup window too.
 */
import { and, eq } from "drizzle-orm";
import { defineTickCheck, writesNothing } from "../../pipeline/index.ts";
import { onceNotices } from "../../schema/index.ts";
import type { FleetDeps } from "../deps.ts";
import { onceKey } from "../once-notices.ts";
import { tellOnce } from "../tell-once.ts";
import { composeDigest, type Digest } from "./digest.ts";
import { utcDay } from "./spend.ts";

export type DigestReport = { status: "off" | "not yet" | "sent today" } | { status: "sent" | "already told"; figures: Digest["figures"] };

export const digestKey = (now: number) => onceKey("digest", "day", utcDay(now));

export const checkDigest = defineTickCheck({
  name: "checkDigest",
  reads(deps: FleetDeps, agentId: string, now: number) {
    return {
      mark: deps.db
        .select({ key: onceNotices.key })
        .from(onceNotices)
        .where(and(eq(onceNotices.agentId, agentId), eq(onceNotices.key, digestKey(now)))),
    };
  },
  decide(deps, agentId, rows, tick) {
    const hour = deps.config.economics.digestHourUtc;
    if (hour === null || hour === undefined) return writesNothing<DigestReport>({ status: "off" });
    if (new Date(tick.now).getUTCHours() < hour) return writesNothing<DigestReport>({ status: "not yet" });
    if (rows.mark.length > 0) return writesNothing<DigestReport>({ status: "sent today" });
    return { statements: [], after: () => sendDigest(deps, agentId, tick.now) };
  },
});

async function sendDigest(deps: FleetDeps, agentId: string, now: number): Promise<DigestReport> {
  const digest = await composeDigest(deps, agentId);
  const told = await tellOnce(deps, agentId, { key: digestKey(now), title: digest.title, body: digest.body, severity: "info" });
  if (told) deps.log.info("daily digest sent", { agentId, ...digest.figures });
  return { status: told ? "sent" : "already told", figures: digest.figures };
}
