/**
 * What in a run's input concerns an instance, as the evidence an action records (issue #22): the
 * consumed events about it, the consumed wakes about it, the human message that names it, and
 * whether it carries an attention marker (a state other than running, stopped or loading, or
 * loading past LOADING_TIMEOUT_S). The LLM's action on an instance nothing concerns becomes an
 * approval request instead (agent/tools/instance-actions.ts): a model told to act on what it was
 * not asked about must ask a human first.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { FleetDeps } from "../fleet/deps.ts";
import type { ConsumedEvent, ConsumedWake } from "../pipeline/index.ts";
import type { ActionEvidence } from "../fleet/actions/action-types.ts";
import { instances, wakes } from "../schema/index.ts";
import { humanText, namesInstance } from "../fleet/actions/human-asks.ts";
import { LOADING_STATES } from "../fleet/instances/overdue-states.ts";
import { attentionMarker } from "./prompt/prompt-attention.ts";

/** A run's input: its consumed events and wakes. */
export interface RunInput {
  events: readonly Pick<ConsumedEvent, "id" | "source" | "payload">[];
  wakes: readonly Pick<ConsumedWake, "id">[];
}

const QUIET_STATES = new Set<string>(["running", "stopped", ...LOADING_STATES]);

/** The events and wakes of the run about this instance, and the human message naming it. */
export async function actionEvidence(
  deps: Pick<FleetDeps, "db">,
  agentId: string,
  instanceId: string,
  input: RunInput,
): Promise<ActionEvidence> {
  const eventIds = input.events.filter((e) => (e.payload as { instanceId?: unknown } | null)?.instanceId === instanceId).map((e) => e.id);
  const wakeIds =
    input.wakes.length === 0
      ? []
      : (
          await deps.db
            .select({ id: wakes.id })
            .from(wakes)
            .where(
              and(
                eq(wakes.agentId, agentId),
                eq(wakes.instanceId, instanceId),
                inArray(
                  wakes.id,
                  input.wakes.map((w) => w.id),
                ),
              ),
            )
        ).map((w) => w.id);
  const human = input.events.find((e) => e.source === "human" && namesInstance(humanText(e.payload), instanceId));
  return {
    eventIds,
    wakeIds,
    ...(human ? { humanMessage: { eventId: human.id, text: humanText(human.payload).slice(0, 300) } } : {}),
  };
}

/** Whether the instance needs attention by itself (the snapshot's marker, or a state not quiet). */
export async function needsAttention(
  deps: Pick<FleetDeps, "db" | "clock" | "config">,
  agentId: string,
  instanceId: string,
): Promise<boolean> {
  const [row] = await deps.db
    .select()
    .from(instances)
    .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId)));
  if (!row) return false;
  return !QUIET_STATES.has(row.state) || attentionMarker(row, deps.clock.now(), deps.config.loadingTimeoutMs) !== "";
}

/** Why nothing in the run concerns the instance, or null when something does. */
export async function unconcerned(
  deps: Pick<FleetDeps, "db" | "clock" | "config">,
  agentId: string,
  instanceId: string,
  evidence: ActionEvidence,
): Promise<string | null> {
  if (evidence.eventIds.length > 0 || evidence.wakeIds.length > 0 || evidence.humanMessage) return null;
  if (await needsAttention(deps, agentId, instanceId)) return null;
  return `nothing in this run's input concerns ${instanceId} (no event, due re-check, attention marker or human message about it), so a human must approve acting on it`;
}
