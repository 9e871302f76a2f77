/**
 * Every row a run's prompt is built from, read in one database batch (one subrequest on the
 * Worker): the session, the fleet, pinned memory, spend today, the epoch's stored turns after the
 * summary (the summary's mark is read by the same statement), the active rejections, the consumed
 * re-checks' wakes and their instances, the run's LLM breaker row, and the recently listed
 * instances still in the state reconciliation first listed them in (the snapshot counts them as
 * unchanged: agent/prompt/prompt-snapshot.ts). Issue 26: these were five
 * to seven round trips before the first LLM call; what the prompt says is agent/prompt/prompt.ts's.
 */
import { and, asc, eq, gt, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import type { RunContext } from "../../pipeline/index.ts";
import { breakers, instanceEvents, instances, memory, messages, sessions, wakes } from "../../schema/index.ts";
import { spendTodayStatement } from "../../fleet/economics/spend.ts";
import { blocksQuery } from "../../fleet/actions/action-blocks.ts";
import { REJECTIONS_SHOWN } from "./prompt-attention.ts";
import { RECENT_CHANGE_MS } from "./prompt-snapshot.ts";

type Context = Pick<RunContext<AgentDeps>, "agentId" | "sessionEpoch" | "wakes">;

/** The breaker state a run starts from (agent/llm/breaker.ts's `state()`, read in the same batch). */
export interface BreakerRow {
  failures: number;
  openUntil: number | null;
  misconfigured: string | null;
}

export async function readPromptRows(
  deps: Pick<AgentDeps, "db" | "clock" | "config">,
  context: Context,
  breakerName: string | null = null,
) {
  const { db } = deps;
  const now = deps.clock.now();
  const { agentId, sessionEpoch } = context;
  const summarizedThrough = sql`coalesce((select ${sessions.summarizedThrough} from ${sessions} where ${sessions.agentId} = ${agentId} and ${sessions.epoch} = ${sessionEpoch}), 0)`;
  const wakeIds = context.wakes.map((w) => w.id);
  // With no re-check consumed the two re-check reads match nothing (and cost nothing extra).
  const consumed: SQL = wakeIds.length ? and(eq(wakes.agentId, agentId), inArray(wakes.id, wakeIds))! : sql`0`;
  const [sessionRows, fleetRows, facts, spendRows, stored, blocks, recheckWakes, recheckFleet, breakerRows, firstSeenRows] = await db.batch(
    [
      db
        .select()
        .from(sessions)
        .where(and(eq(sessions.agentId, agentId), eq(sessions.epoch, sessionEpoch))),
      db
        .select()
        .from(instances)
        .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt))),
      db
        .select({ key: memory.key, fact: memory.fact, untrusted: memory.untrusted })
        .from(memory)
        .where(eq(memory.agentId, agentId))
        .orderBy(asc(memory.key)),
      spendTodayStatement(deps, agentId, now),
      db
        .select()
        .from(messages)
        .where(and(eq(messages.agentId, agentId), eq(messages.sessionEpoch, sessionEpoch), gt(messages.id, summarizedThrough)))
        .orderBy(asc(messages.id)),
      blocksQuery(deps, agentId, true, REJECTIONS_SHOWN),
      db.select().from(wakes).where(consumed),
      db
        .select()
        .from(instances)
        .where(and(eq(instances.agentId, agentId), sql`${instances.id} in (select ${wakes.instanceId} from ${wakes} where ${consumed})`)),
      db
        .select()
        .from(breakers)
        .where(eq(breakers.name, breakerName ?? "")),
      // Read from the agent's instances changed lately (at most the fleet), each looked up in its
      // own history by the (agent, instance) index: its state is still that of its first sighting
      // by reconciliation when that sighting's time is the state's time (any later change moves it).
      db
        .select({ id: instances.id })
        .from(instances)
        .where(
          and(
            eq(instances.agentId, agentId),
            isNull(instances.goneAt),
            gt(instances.stateAt, now - RECENT_CHANGE_MS),
            sql`exists (select 1 from ${instanceEvents} where ${instanceEvents.agentId} = ${instances.agentId}
            and ${instanceEvents.instanceId} = ${instances.id} and ${instanceEvents.fromState} is null
            and ${instanceEvents.source} = 'reconcile' and ${instanceEvents.at} = ${instances.stateAt})`,
          ),
        ),
    ],
  );
  const breakerRow = breakerRows[0];
  const breaker: BreakerRow = {
    failures: breakerRow?.failures ?? 0,
    openUntil: breakerRow?.openUntil ?? null,
    misconfigured: breakerRow?.misconfigured ?? null,
  };
  const firstSeen = new Set(firstSeenRows.map((r) => r.id));
  return { session: sessionRows[0], fleetRows, facts, spendRows, stored, blocks, recheckWakes, recheckFleet, breaker, firstSeen };
}

export type PromptRows = Awaited<ReturnType<typeof readPromptRows>>;
