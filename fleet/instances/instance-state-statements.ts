/**
 * The statements of a recorded state change (fleet/instances/instance-state.ts), built once per database
 * handle with placeholders: every webhook binds its values to the same SQL text instead of
 * drizzle building five statements again. What varies by change (its source, the states that
 * match or keep an expectation, which provider details it carries) is bound as values too, so
 * one text serves every change and SQLite's work per statement stays small:
 * - state sets are bound as `|a|b|` strings and tested with instr();
 * - details carry one "given" flag per column: a detail the change does not name stays as stored.
 * Columns are named by the schema's definitions (drizzle builders, `${table.column}`), never by hand.
 */
import { and, eq, ne, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { events, instanceEvents, instances } from "../../schema/index.ts";
import { preparedPerDb } from "../../db/prepared.ts";
import { insertWhere } from "../../db/insert-where.ts";
import type { InstanceState } from "../providers/provider.ts";

/** A set of states as one bindable value: `|running|loading|` (state names hold no `|`). */
export function stateSet(states: readonly InstanceState[]): string {
  return `|${states.join("|")}|`;
}

/** Provider details an instance row keeps; each is bound with a `<key>Given` flag. */
export const DETAIL_KEYS = [
  "label",
  "gpuName",
  "gpuCount",
  "pricePerHour",
  "startedAt",
  "storagePerHour",
  "endsAt",
  "interruptible",
] as const satisfies readonly (keyof typeof instances.$inferSelect)[];
export type DetailKey = (typeof DETAIL_KEYS)[number];

/** The row an upsert proposed (SQLite's `excluded`), with the instances table's columns. */
const proposed = alias(instances, "excluded");

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
  const thisInstance = and(eq(instances.agentId, agentId), eq(instances.id, instanceId));

  // Why the change wakes nobody, read from the stored instance (null: it is news).
  const dropReason = sql`${db
    .select({
      reason: sql`case when ${instances.stateAt} > ${at} then 'superseded' when ${instances.state} = ${state} then 'unchanged'
        when ${instances.expectedUntil} >= ${now} and instr(${p("matched")}, '|' || ${instances.expectedState} || '|') > 0 then 'expected' end`,
    })
    .from(instances)
    .where(thisInstance)}`;
  // Whether a webhook report may be stored at all (`gate` 1; other sources bind 0): under a
  // labelPrefix filter only for a stored instance whose label the filter selects, and a new id
  // (webhook-only) only while the agent keeps fewer than `webhookOnlyMax` of those. Refused, the
  // event is not inserted, so nothing in the batch writes (fleet/webhook-report-gate.ts says why).
  const labelPrefix = p("labelPrefix");
  const storedInstance = sql`exists (select 1 from ${instances} where ${thisInstance})`;
  const labelSelected = sql`exists (select 1 from ${instances} where ${thisInstance}
    and substr(coalesce(${instances.label}, ''), 1, length(${labelPrefix})) = ${labelPrefix})`;
  const webhookOnlyKept = sql`(select count(*) from ${instances} where ${instances.agentId} = ${agentId} and ${instances.webhookOnly} = 1)`;
  const admitted = sql`(${p("gate")} = 0 or ((${labelPrefix} is null or ${labelSelected})
    and (${storedInstance} or ${webhookOnlyKept} < ${p("webhookOnlyMax")})))`;
  // The inbox's own insert, judged on the way in: dropped with its reason when it is no news.
  const insert = insertWhere(
    db,
    events,
    {
      agentId,
      source,
      priority: 1,
      dedupKey,
      payload: p("payload"),
      status: sql`case when ${dropReason} is null then 'pending' else 'dropped' end`,
      dropReason,
      createdAt: now,
    },
    admitted,
  ).onConflictDoNothing();

  // Only by the batch that stored the event: after the insert and the read of its row (a read
  // changes neither), changes() and last_insert_rowid() still name the insert.
  const appendHistory = insertWhere(
    db,
    instanceEvents,
    {
      agentId,
      instanceId,
      fromState: sql`(select ${instances.state} from ${instances} where ${thisInstance})`,
      toState: state,
      source,
      message,
      at,
      eventId: sql`${events.id}`,
      createdAt: now,
    },
    and(sql`changes() = 1`, eq(events.id, sql`last_insert_rowid()`), or(ne(events.status, "dropped"), eq(events.dropReason, "expected")))!,
    sql`${events}`,
  );

  // A newer report ends the expectation unless it is still on the way (then it is the echo).
  const keptExpectation = sql`${proposed.stateAt} < ${instances.stateAt} or instr(${p("kept")}, '|' || ${instances.expectedState} || '|') > 0`;
  const newer = sql`${proposed.stateAt} >= ${instances.stateAt}`;
  const storedNow = sql`exists (select 1 from ${events} where ${events.agentId} = ${agentId} and ${events.dedupKey} = ${dedupKey} and ${events.createdAt} = ${now})`;
  // A row is created only by the batch that stored the event; one first made by a webhook is
  // webhook-only until a provider's listing names it (reconciliation clears the mark).
  const upsertInstance = insertWhere(
    db,
    instances,
    {
      agentId,
      id: instanceId,
      state,
      stateAt: at,
      statusMessage: message,
      lastSeenAt: now,
      reportsByWebhook: webhook,
      webhookOnly: p("webhookOnlyNew"),
      reportsMinute: sql`case when ${webhook} then ${p("minute")} end`,
      reportsInMinute: webhook,
      updatedAt: now,
      ...Object.fromEntries(DETAIL_KEYS.map((key) => [key, p(key)])),
    },
    storedNow,
  )
    .onConflictDoUpdate({
      target: [instances.agentId, instances.id],
      set: {
        state: sql`case when ${newer} then ${proposed.state} else ${instances.state} end`,
        stateAt: sql`max(${proposed.stateAt}, ${instances.stateAt})`,
        statusMessage: sql`case when ${newer} then coalesce(${proposed.statusMessage}, ${instances.statusMessage}) else ${instances.statusMessage} end`,
        lastSeenAt: sql`case when ${webhook} then max(${proposed.lastSeenAt}, ${instances.lastSeenAt}) else ${instances.lastSeenAt} end`,
        heartbeatFlaggedAt: sql`case when ${webhook} then null else ${instances.heartbeatFlaggedAt} end`,
        reportsByWebhook: sql`case when ${webhook} then 1 else ${instances.reportsByWebhook} end`,
        expectedState: sql`case when ${keptExpectation} then ${instances.expectedState} else null end`,
        expectedUntil: sql`case when ${keptExpectation} then ${instances.expectedUntil} else null end`,
        goneAt: sql`null`,
        // Idle is a mark of a running instance (fleet/instances/telemetry.ts keeps it): a newer state away from running ends it.
        idleSince: sql`case when ${newer} and ${proposed.state} <> 'running' then null else ${instances.idleSince} end`,
        webhookOnly: sql`case when ${source} = 'reconcile' then 0 else ${instances.webhookOnly} end`,
        // The flood bound's count (jobs/instance-report.ts): the instance's own reports stored this minute.
        reportsMinute: sql`case when ${webhook} then ${p("minute")} else ${instances.reportsMinute} end`,
        reportsInMinute: sql`case when not ${webhook} then ${instances.reportsInMinute}
        when ${instances.reportsMinute} = ${p("minute")} then ${instances.reportsInMinute} + 1 else 1 end`,
        updatedAt: sql`${now}`,
        ...Object.fromEntries(
          DETAIL_KEYS.map((key) => [key, sql`case when ${p(`${key}Given`)} then ${proposed[key]} else ${instances[key]} end`]),
        ),
      },
      setWhere: storedNow,
    })
    // The flood bound's count as this batch left it (fleet/instances/report-flood.ts).
    .returning({ reportsMinute: instances.reportsMinute, reportsInMinute: instances.reportsInMinute });

  return {
    insertEvent: insert.prepare(),
    // Right after the insert: changes() says whether it stored the event (1) or found it stored (0).
    stored: db
      .select({ id: events.id, status: events.status, dropReason: events.dropReason, inserted: sql<number>`changes()` })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.dedupKey, dedupKey)))
      .prepare(),
    appendHistory: appendHistory.prepare(),
    upsertInstance: upsertInstance.prepare(),
  };
});
