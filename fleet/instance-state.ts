/**
 * Instance state changes, from any source (webhook, reconciliation, heartbeat check, an action),
 * enter here. One database batch stores the inbox event (idempotent on its dedup key), upserts
 * the instance's latest state only if the change is not older than the one stored, appends the
 * instance's history, and requests a run. A change older than the stored one is kept as an event
 * dropped as `superseded`; a report of the state already stored is a heartbeat (`unchanged`):
 * it refreshes last-seen and wakes nobody. A report that matches what the agent's own action
 * led it to expect (fleet/expectations.ts) is stored and kept in the history but wakes nobody
 * either (`expected`): the agent does not hear the echo of its own action.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { events, instanceEvents, instances } from "../schema/index.ts";
import { debounceWindow, scheduleRunStatement } from "../triggers/request-run.ts";
import { commitIngest, eventIsPending, publishAfterIngest, type Ingested } from "../triggers/ingest.ts";
import { expectationsKeptBy, expectationsMatchedBy } from "./expectations.ts";
import type { FleetInstance, InstanceState } from "./provider.ts";

export interface StateChange {
  agentId: string;
  instanceId: string;
  state: InstanceState;
  /** When the change happened (ms epoch); defaults to now. */
  at?: number;
  message?: string | null;
  source: "webhook" | "reconcile" | "heartbeat" | "action";
  dedupKey: string;
  /** Provider details to keep on the instance row (reconciliation knows them; webhooks do not). */
  details?: Partial<Omit<FleetInstance, "id" | "state">>;
}

export interface RecordedChange extends Ingested {
  /** pending (a run is requested) | superseded | unchanged | expected (the echo of an action) */
  outcome: "pending" | "superseded" | "unchanged" | "expected";
}

export async function recordInstanceState(deps: Deps, change: StateChange): Promise<RecordedChange> {
  const { db, clock } = deps;
  const now = clock.now();
  const at = change.at ?? now;
  const { agentId, instanceId, dedupKey } = change;
  const stored = sql`(select ${instances.stateAt} from ${instances} where ${instances.agentId} = ${agentId} and ${instances.id} = ${instanceId})`;
  const storedState = sql`(select ${instances.state} from ${instances} where ${instances.agentId} = ${agentId} and ${instances.id} = ${instanceId})`;
  const matched = expectationsMatchedBy(change.state);
  const kept = expectationsKeptBy(change.state);
  const expecting = sql`exists (select 1 from ${instances} where ${instances.agentId} = ${agentId} and ${instances.id} = ${instanceId}
    and ${instances.expectedUntil} >= ${now} and ${instances.expectedState} in ${matched})`;
  const dropReason = sql`case when ${stored} > ${at} then 'superseded' when ${storedState} = ${change.state} then 'unchanged'
    when ${expecting} then 'expected' else null end`;
  // A newer report ends the expectation unless it is still on the way (then it is the echo).
  const keepExpectation = (column: typeof instances.expectedState | typeof instances.expectedUntil) =>
    kept.length
      ? sql`case when excluded.state_at < ${instances.stateAt} or ${instances.expectedState} in ${kept} then ${column} else null end`
      : sql`case when excluded.state_at < ${instances.stateAt} then ${column} else null end`;
  const payload = JSON.stringify({ instanceId, state: change.state, at: new Date(at).toISOString(), message: change.message ?? null });
  const details = change.details ?? {};

  const [inserted, existing, , , moved] = await commitIngest(deps, [
    db.all<{ id: number; status: string }>(sql`insert into ${events} (agent_id, source, priority, dedup_key, payload, status, drop_reason, created_at)
      values (${agentId}, ${change.source}, 1, ${dedupKey}, ${payload},
              case when ${dropReason} is null then 'pending' else 'dropped' end, ${dropReason}, ${now})
      on conflict do nothing
      returning id, status`),
    db
      .select({ id: events.id, status: events.status, dropReason: events.dropReason })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.dedupKey, dedupKey))),
    db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
      select ${agentId}, ${instanceId}, ${storedState}, ${change.state}, ${change.source}, ${change.message ?? null}, ${at}, e.id, ${now}
      from ${events} e
      where e.agent_id = ${agentId} and e.dedup_key = ${dedupKey} and (e.status <> 'dropped' or e.drop_reason = 'expected')
        and not exists (select 1 from ${instanceEvents} ie where ie.agent_id = ${agentId} and ie.event_id = e.id)`),
    db
      .insert(instances)
      .values({
        agentId,
        id: instanceId,
        state: change.state,
        stateAt: at,
        statusMessage: change.message ?? null,
        lastSeenAt: now,
        reportsByWebhook: change.source === "webhook",
        updatedAt: now,
        ...details,
      })
      .onConflictDoUpdate({
        target: [instances.agentId, instances.id],
        set: {
          state: sql`case when excluded.state_at >= ${instances.stateAt} then excluded.state else ${instances.state} end`,
          stateAt: sql`max(excluded.state_at, ${instances.stateAt})`,
          statusMessage: sql`case when excluded.state_at >= ${instances.stateAt} then coalesce(excluded.status_message, ${instances.statusMessage}) else ${instances.statusMessage} end`,
          // Only the instance's own reports (webhooks) prove it is alive.
          lastSeenAt: change.source === "webhook" ? sql`max(excluded.last_seen_at, ${instances.lastSeenAt})` : sql`${instances.lastSeenAt}`,
          heartbeatFlaggedAt: change.source === "webhook" ? null : sql`${instances.heartbeatFlaggedAt}`,
          reportsByWebhook: change.source === "webhook" ? true : sql`${instances.reportsByWebhook}`,
          expectedState: keepExpectation(instances.expectedState),
          expectedUntil: keepExpectation(instances.expectedUntil),
          goneAt: null,
          updatedAt: now,
          ...details,
        },
        // Only the batch that stored the event updates the instance: a repeated dedup key writes nothing.
        setWhere: sql`exists (select 1 from ${events} where ${events.agentId} = ${agentId} and ${events.dedupKey} = ${dedupKey} and ${events.createdAt} = ${now})`,
      }),
    scheduleRunStatement(deps, agentId, now + debounceWindow(deps.config, 1), eventIsPending(agentId, dedupKey)),
  ]);
  await publishAfterIngest(deps, agentId, moved[0]);
  const row = existing[0]!;
  const outcome = row.status === "dropped" ? (row.dropReason as "superseded" | "unchanged" | "expected") : "pending";
  return { eventId: row.id, duplicate: inserted.length === 0, outcome };
}
