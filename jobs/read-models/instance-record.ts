/**
 * Read model of one instance's page: the instance, its state history, the actions taken on it,
 * and the runs that touched it (runs that acted on it, and runs that consumed an event about it),
 * each run with its one-line outcome, its GPU utilisation of the last 24 hours, its blocks, and
 * whether it is stalled (fleet/instances/stall.ts).
 * The history is the same read as GET /api/agents/:agent/instances/:id/events (listInstanceEvents).
 */
import { and, desc, eq, inArray, isNotNull } from "drizzle-orm";
import { listBlocks } from "../../fleet/actions/action-blocks.ts";
import { presentAction } from "../../fleet/actions/actions.ts";
import { listInstanceEvents, listInstances } from "../../fleet/instances/list-instances.ts";
import type { Deps } from "../deps.ts";
import { actions, events, instanceEvents, runs } from "../../schema/index.ts";
import { presentRun } from "../../pipeline/index.ts";
import { withOutcomes } from "./run-list.ts";
import { loadUtilisation } from "./instance-utilisation.ts";
import { stallOfView } from "./attention-stall.ts";
import { stallSettings } from "../../fleet/instances/stall.ts";

export const INSTANCE_HISTORY = 100;
const INSTANCE_RUNS = 50;

export async function getInstanceRecord(deps: Pick<Deps, "db" | "clock" | "config">, agentId: string, instanceId: string) {
  const { db } = deps;
  const instance = (await listInstances(deps, agentId)).find((i) => i.id === instanceId);
  if (!instance) return null;
  const [history, actionRows, eventRuns, utilisation, activeBlocks] = await Promise.all([
    listInstanceEvents(deps, agentId, instanceId, INSTANCE_HISTORY),
    db
      .select()
      .from(actions)
      .where(and(eq(actions.agentId, agentId), eq(actions.instanceId, instanceId)))
      .orderBy(desc(actions.id))
      .limit(INSTANCE_HISTORY),
    db
      .selectDistinct({ runId: events.runId })
      .from(instanceEvents)
      .innerJoin(events, eq(events.id, instanceEvents.eventId))
      .where(and(eq(instanceEvents.agentId, agentId), eq(instanceEvents.instanceId, instanceId), isNotNull(events.runId))),
    loadUtilisation(deps, agentId, instanceId),
    listBlocks(deps, agentId, true),
  ]);
  const runIds = [
    ...new Set([...actionRows.map((a) => a.runId), ...eventRuns.map((e) => e.runId)].filter((id): id is number => id !== null)),
  ];
  const runRows = runIds.length
    ? await db
        .select()
        .from(runs)
        .where(and(eq(runs.agentId, agentId), inArray(runs.runId, runIds)))
        .orderBy(desc(runs.runId))
        .limit(INSTANCE_RUNS)
    : [];
  return {
    instance,
    history,
    actions: actionRows.map(presentAction),
    runs: await withOutcomes(deps, agentId, runRows.map(presentRun)),
    utilisation,
    blocks: activeBlocks.filter((b) => b.instanceId === instanceId),
    stall: stallOfView(instance, deps.clock.now(), stallSettings(deps.config)),
  };
}

export type InstanceRecord = NonNullable<Awaited<ReturnType<typeof getInstanceRecord>>>;
