/**
 * The statements of a recorded state change (fleet/instance-state.ts), built once per database
 * handle with placeholders: every webhook binds its values to the same SQL text instead of
 * drizzle building five statements again. What varies by change (its source, the states that
 * match or keep an expectation, which provider details it carries) is bound as values too, so
 * one text serves every change and SQLite's work per statement stays small:
 * - state sets are bound as `|a|b|` strings and tested with instr();
 * - details carry one "given" flag per column: a detail the change does not name stays as stored.
 */
import { and, eq, sql } from "drizzle-orm";
import { events, instanceEvents, instances } from "../schema/index.ts";
import { prepareRaw, preparedPerDb } from "../db/prepared.ts";
import { insertEvent } from "../pipeline/index.ts";
import type { InstanceState } from "./provider.ts";

/** A set of states as one bindable value: `|running|loading|` (state names hold no `|`). */
export function stateSet(states: readonly InstanceState[]): string {
  return `|${states.join("|")}|`;
}

/** Provider details an instance row keeps, each with its "given" flag placeholder. */
export const DETAIL_COLUMNS = {
  label: "label",
  gpuName: "gpu_name",
  gpuCount: "gpu_count",
  pricePerHour: "price_per_hour",
  startedAt: "started_at",
} as const;
export type DetailKey = keyof typeof DETAIL_COLUMNS;

const p = (name: string) => sql.placeholder(name);

export const instanceStatePrepared = preparedPerDb((db) => {
  const agentId = p("agentId");
  const instanceId = p("instanceId");
  const dedupKey = p("dedupKey");
  const now = p("now");
  const at = p("at");
  const state = p("state");
  const source = p("source");
  const message = p("message");
  const webhook = p("webhook");

  // Why the change wakes nobody, read from the stored instance (null: it is news).
  const dropReason = sql`(select case when i.state_at > ${at} then 'superseded' when i.state = ${state} then 'unchanged'
      when i.expected_until >= ${now} and instr(${p("matched")}, '|' || i.expected_state || '|') > 0 then 'expected' end
    from ${instances} i where i.agent_id = ${agentId} and i.id = ${instanceId})`;
  // The inbox's own insert, judged on the way in: dropped with its reason when it is no news.
  const insert = insertEvent(db, {
    agentId,
    source,
    priority: 1,
    dedupKey,
    payload: p("payload"),
    status: sql`case when ${dropReason} is null then 'pending' else 'dropped' end`,
    dropReason,
    createdAt: now,
  });

  // Only by the batch that stored the event: after the insert and the read of its row (a read
  // changes neither), changes() and last_insert_rowid() still name the insert.
  const appendHistory = db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
    select ${agentId}, ${instanceId}, (select i.state from ${instances} i where i.agent_id = ${agentId} and i.id = ${instanceId}),
      ${state}, ${source}, ${message}, ${at}, e.id, ${now}
    from ${events} e
    where changes() = 1 and e.id = last_insert_rowid() and (e.status <> 'dropped' or e.drop_reason = 'expected')`);

  // A newer report ends the expectation unless it is still on the way (then it is the echo).
  const keptExpectation = sql`excluded.state_at < instances.state_at or instr(${p("kept")}, '|' || instances.expected_state || '|') > 0`;
  const detailColumns = Object.entries(DETAIL_COLUMNS);
  const upsertInstance = db.run(sql`insert into ${instances}
      (agent_id, id, state, state_at, status_message, last_seen_at, reports_by_webhook, updated_at, ${sql.raw(detailColumns.map(([, c]) => c).join(", "))})
    values (${agentId}, ${instanceId}, ${state}, ${at}, ${message}, ${now}, ${webhook}, ${now}, ${sql.join(
      detailColumns.map(([key]) => p(key)),
      sql`, `,
    )})
    on conflict (agent_id, id) do update set
      state = case when excluded.state_at >= instances.state_at then excluded.state else instances.state end,
      state_at = max(excluded.state_at, instances.state_at),
      status_message = case when excluded.state_at >= instances.state_at then coalesce(excluded.status_message, instances.status_message) else instances.status_message end,
      last_seen_at = case when ${webhook} then max(excluded.last_seen_at, instances.last_seen_at) else instances.last_seen_at end,
      heartbeat_flagged_at = case when ${webhook} then null else instances.heartbeat_flagged_at end,
      reports_by_webhook = case when ${webhook} then 1 else instances.reports_by_webhook end,
      expected_state = case when ${keptExpectation} then instances.expected_state else null end,
      expected_until = case when ${keptExpectation} then instances.expected_until else null end,
      gone_at = null,
      updated_at = ${now},
      ${sql.join(
        detailColumns.map(([key, column]) => sql`${sql.raw(column)} = case when ${p(`${key}Given`)} then excluded.${sql.raw(column)} else instances.${sql.raw(column)} end`),
        sql`, `,
      )}
    where exists (select 1 from ${events} where agent_id = ${agentId} and dedup_key = ${dedupKey} and created_at = ${now})`);

  return {
    insertEvent: insert.prepare(),
    // Right after the insert: changes() says whether it stored the event (1) or found it stored (0).
    stored: db
      .select({ id: events.id, status: events.status, dropReason: events.dropReason, inserted: sql<number>`changes()` })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.dedupKey, dedupKey)))
      .prepare(),
    appendHistory: prepareRaw(db, appendHistory),
    upsertInstance: prepareRaw(db, upsertInstance),
  };
});
