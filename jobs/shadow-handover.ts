/**
 * The hand-over from shadow mode back to acting (issue #33 item 4): while an agent was paused,
 * instances broke and its runs only proposed what they would have done. On resuming, one inbox
 * event (source `mode`, priority 0 like a human's trigger) names every instance not as intended
 * and every proposal of the pause that still applies, and its ingest requests the run, so the
 * agent decides on them at once instead of waiting for someone to ask in chat. Bounded: one event
 * per shadow episode (its dedup key is the pause's own time), written only when the mode really
 * changed from shadow to act (jobs/agent-mode.ts), each list cut at HANDOVER_MAX_ITEMS.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import type { Deps } from "./deps.ts";
import { actions, instances, operatorActivity } from "../schema/index.ts";
import { ingestEvent, type Ingested } from "../pipeline/index.ts";
import { configForAgent, storedSettings } from "../runtime/agent-settings.ts";
import { iso } from "../runtime/time.ts";
import { LOADING_STATES } from "../fleet/instances/overdue-states.ts";

/** At most this many instances, and as many proposals, in the event (a huge fleet's list is cut, and says so). */
export const HANDOVER_MAX_ITEMS = 50;

type InstanceRow = typeof instances.$inferSelect;
type Config = Deps["config"];

/** Why an instance is not as intended, or null when it is. */
function notAsIntended(i: InstanceRow, config: Config, now: number): string | null {
  if (i.state === "exited" || i.state === "offline" || i.state === "unknown") return i.state;
  if ((LOADING_STATES as readonly string[]).includes(i.state) && now - i.stateAt >= config.loadingTimeoutMs)
    return `stuck in ${i.state} for ${Math.round((now - i.stateAt) / 1000)} s`;
  const stopAfter = config.economics.idleStopAfterMs;
  if (i.state === "running" && stopAfter > 0 && i.idleSince !== null && now - i.idleSince >= stopAfter)
    return `idle for ${Math.round((now - i.idleSince) / 1000)} s, past its stop window`;
  return null;
}

/** When the agent was last switched to shadow (null: never switched; shadow came from AGENT_MODE). */
async function shadowSince(deps: Pick<Deps, "db">, agentId: string): Promise<number | null> {
  const [row] = await deps.db
    .select({ at: operatorActivity.at })
    .from(operatorActivity)
    .where(and(eq(operatorActivity.agentId, agentId), eq(operatorActivity.action, "mode"), eq(operatorActivity.subject, "shadow")))
    .orderBy(desc(operatorActivity.at), desc(operatorActivity.id))
    .limit(1);
  return row?.at ?? null;
}

/**
 * What the resumed agent must decide on: instances not as intended, and proposals made since the
 * pause whose instance has not changed state since (so the cause still holds).
 */
export async function handoverPayload(deps: Pick<Deps, "db" | "clock" | "config">, agentId: string, settings: unknown) {
  const now = deps.clock.now();
  const config = configForAgent(deps.config, storedSettings(settings));
  const since = await shadowSince(deps, agentId);
  const fleet = await deps.db
    .select()
    .from(instances)
    .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt)))
    .orderBy(instances.id);
  const byId = new Map(fleet.map((i) => [i.id, i]));
  const broken = fleet.flatMap((i) => {
    const why = notAsIntended(i, config, now);
    return why ? [{ instanceId: i.id, state: i.state, stateSince: iso(i.stateAt), why }] : [];
  });
  const proposed = await deps.db
    .select()
    .from(actions)
    .where(and(eq(actions.agentId, agentId), eq(actions.status, "proposed")))
    .orderBy(actions.id);
  const stillApplies = proposed.filter((a) => {
    if (since !== null && a.createdAt < since) return false;
    const instance = a.instanceId === null ? undefined : byId.get(a.instanceId);
    return instance !== undefined && instance.stateAt <= a.createdAt;
  });
  return {
    since,
    payload: {
      reason: "acting resumed after shadow mode: decide now on these instances and on the proposals made while paused",
      shadowSince: since === null ? null : iso(since),
      instances: broken.slice(0, HANDOVER_MAX_ITEMS),
      proposals: stillApplies.slice(0, HANDOVER_MAX_ITEMS).map((a) => ({
        actionId: a.id,
        instanceId: a.instanceId,
        kind: a.kind,
        reason: a.reason,
        proposedAt: iso(a.createdAt),
        instanceState: byId.get(a.instanceId!)!.state,
      })),
      ...(broken.length > HANDOVER_MAX_ITEMS || stillApplies.length > HANDOVER_MAX_ITEMS
        ? { cut: `lists cut to ${HANDOVER_MAX_ITEMS}: ${broken.length} instances, ${stillApplies.length} proposals in all` }
        : {}),
    },
  };
}

/** Writes the resume's one event and requests its run (the ingest's own debounce, priority 0). */
export async function handOverFromShadow(deps: Deps, agentId: string, settings: unknown): Promise<Ingested> {
  const { since, payload } = await handoverPayload(deps, agentId, settings);
  return ingestEvent(deps, { agentId, source: "mode", priority: 0, dedupKey: `mode:act:${since ?? "env"}`, payload });
}
