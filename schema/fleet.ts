/**
 * The fleet as fleetwarden last saw it: instances (latest state per instance), their state
 * history, every action taken on them, approvals for destructive ones, and the simulator's fleet.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const instances = sqliteTable(
  "instances",
  {
    agentId: text().notNull(),
    id: text().notNull(),
    state: text().notNull(),
    /** Time of the state change stored here; an older change never replaces it. */
    stateAt: integer().notNull(),
    label: text(),
    gpuName: text(),
    gpuCount: integer(),
    pricePerHour: real(),
    statusMessage: text(),
    startedAt: integer(),
    lastSeenAt: integer().notNull(),
    /** Expected heartbeat interval; overdue instances become events. */
    heartbeatS: integer(),
    /** Set once the instance has reported by webhook: only such instances are expected to heartbeat. */
    reportsByWebhook: integer({ mode: "boolean" }).notNull().default(false),
    heartbeatFlaggedAt: integer(),
    /**
     * What the agent's last action should bring the instance to, and until when (no echo): a
     * report on the way there wakes nobody; a deviation, or the deadline passing, is an event.
     */
    expectedState: text(),
    expectedUntil: integer(),
    goneAt: integer(),
    /** Latest GPU utilisation (0-100 %) and when it was measured; null when never reported. */
    gpuUtil: real(),
    gpuUtilAt: integer(),
    /** Latest disk use (0-100 %). */
    diskUsedPct: real(),
    /**
     * The instance's own progress counter (steps, samples, tokens: any number that grows while useful
     * work happens), as last reported by webhook; null when it never reported one (never stalled).
     */
    progress: real(),
    progressAt: integer(),
    /** When the progress counter last grew (or was first seen): a running instance whose counter has not moved for STALL_AFTER_S is stalled. */
    progressMovedAt: integer(),
    /** Where the latest telemetry came from: webhook | vast | simulator. */
    telemetrySource: text(),
    /** Since when utilisation has stayed below IDLE_GPU_UTIL_PCT (fresh telemetry only); null when not idle. */
    idleSince: integer(),
    /** What the instance costs per hour while stopped (storage); pricePerHour is while running. */
    storagePerHour: real(),
    /** Up to when spend has been accrued into instance_spend (fleet/economics/spend.ts). */
    spendAccruedAt: integer(),
    /** The rental contract's end (ms epoch), when the provider has one. */
    endsAt: integer(),
    /** Interruptible (bid) rental: a higher bid can stop it. */
    interruptible: integer({ mode: "boolean" }),
    /** Why a stopped instance is stopped, when known: "outbid" (fleet/providers/provider.ts StopReason). */
    stopReason: text(),
    /** What the instance is made from (fleet/providers/provider.ts InstanceSpec), stored when first seen: a gone instance can still be replaced. */
    spec: text({ mode: "json" }),
    /** The provider's machine (host) id: a replacement excludes it (fleet/providers/provider.ts). */
    machineId: text(),
    /** Lineage of a replacement: the instance this one replaced, and the one that replaced it. */
    replaces: text(),
    replacedBy: text(),
    /**
     * Known only from webhook reports: the provider does not list it (a box that reports but is
     * not rented through the provider's account). Capped per agent, listed apart, sorted last.
     */
    webhookOnly: integer({ mode: "boolean" }).notNull().default(false),
    /**
     * The instance's own reports stored in the minute `reportsMinute` (minutes since the epoch):
     * the flood bound's count (fleet/instances/report-flood.ts), kept by the batch that stores a report.
     */
    reportsMinute: integer(),
    reportsInMinute: integer().notNull().default(0),
    updatedAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.id] })],
);

export const instanceEvents = sqliteTable(
  "instance_events",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    instanceId: text().notNull(),
    fromState: text(),
    toState: text().notNull(),
    /** webhook | reconcile | heartbeat | action */
    source: text().notNull(),
    message: text(),
    at: integer().notNull(),
    eventId: integer(),
    createdAt: integer().notNull(),
  },
  (t) => [
    index("instance_events_instance").on(t.agentId, t.instanceId, t.id),
    // "Has this event's history row been written?" is asked on every state change: without this
    // index it reads the agent's whole history.
    index("instance_events_event").on(t.agentId, t.eventId),
    // Retention prunes old history by age.
    index("instance_events_created").on(t.createdAt),
  ],
);

export const actions = sqliteTable(
  "actions",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    runId: integer(),
    instanceId: text(),
    /** start | stop | reboot | destroy | label */
    kind: text().notNull(),
    /** llm | rules | human */
    decidedBy: text().notNull(),
    idempotencyKey: text().notNull(),
    /**
     * pending | succeeded | failed | awaiting_approval | rejected | rate_limited | approved |
     * proposed (shadow mode: recorded, never sent) | refused (a run or hour bound said no)
     */
    status: text().notNull(),
    reason: text(),
    /** What justified it: {eventIds, wakeIds, humanMessage?} (fleet/actions/action-types.ts ActionEvidence). */
    evidence: text({ mode: "json" }),
    /** The model that decided it, when decidedBy is llm. */
    model: text(),
    result: text({ mode: "json" }),
    error: text(),
    approvalId: integer(),
    /** The operator whose decision ran it, when decidedBy is human. */
    operator: text(),
    createdAt: integer().notNull(),
    finishedAt: integer(),
  },
  (t) => [
    uniqueIndex("actions_idempotency").on(t.agentId, t.idempotencyKey),
    index("actions_instance").on(t.agentId, t.instanceId, t.createdAt),
    // The per-run and per-hour bounds count an agent's actions without reading its history.
    index("actions_run").on(t.agentId, t.runId),
    index("actions_created").on(t.agentId, t.createdAt),
    // The actions audit pages newest first by id.
    index("actions_recent").on(t.agentId, t.id),
    // GET /metrics counts actions per agent, kind and status from this index alone.
    index("actions_metrics").on(t.agentId, t.kind, t.status),
  ],
);

export const approvals = sqliteTable(
  "approvals",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    runId: integer(),
    kind: text().notNull(),
    instanceId: text(),
    reason: text().notNull(),
    requestedBy: text().notNull(),
    /** pending | approved | rejected | expired */
    status: text().notNull().default("pending"),
    /** The operator who asked for it, when a human did (APPROVAL_TWO_PERSON: they cannot approve it). */
    requestedByOperator: text(),
    /** What the approver needs to decide: {gpuName, gpuCount, pricePerHour, state, stateSince, …} at the time of asking. */
    context: text({ mode: "json" }),
    /** After this (ms epoch) a pending approval is expired and does nothing (APPROVAL_EXPIRES_S). */
    expiresAt: integer(),
    /** When the one reminder of a pending approval was sent (APPROVAL_REMIND_S). */
    remindedAt: integer(),
    decidedAt: integer(),
    /** The operator who approved or rejected it. */
    decidedBy: text(),
    note: text(),
    actionId: integer(),
    createdAt: integer().notNull(),
  },
  (t) => [
    index("approvals_status").on(t.agentId, t.status),
    index("approvals_recent").on(t.agentId, t.id),
    index("approvals_pending_expiry").on(t.expiresAt).where(sql`status = 'pending'`),
  ],
);

/**
 * A replacement of a dead rental (fleet/replacement*.ts): proposed, approved, then carried out in
 * order — offers searched, one create, the new instance awaited, only then the old one destroyed.
 * `status` moves forward only; `createAttemptedAt` is written before the provider's create is
 * called, so a crash after it never leads to a second create (the marker label finds the instance).
 */
export const replacements = sqliteTable(
  "replacements",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    oldInstanceId: text().notNull(),
    /**
     * proposed | awaiting_approval | approved | creating | waiting | retiring | done | failed |
     * rejected | expired | cancelled
     */
    status: text().notNull(),
    /** Why it was proposed (offline for …, start failed: …). */
    reason: text().notNull(),
    /** llm | rules | human */
    decidedBy: text().notNull(),
    runId: integer(),
    approvalId: integer(),
    /** What the new instance is made from, read from the old one when proposed (fleet/providers/provider.ts InstanceSpec). */
    spec: text({ mode: "json" }),
    /** The old instance's GPU, count, disk, price and machine when proposed (the offer query's basis). */
    basis: text({ mode: "json" }),
    /** The offer chosen. */
    offer: text({ mode: "json" }),
    /** Every create attempt in order (offer, outcome, error): taken or out-of-capacity offers are tried in turn up to REPLACE_MAX_OFFERS. */
    attempts: text({ mode: "json" }),
    /** Label the create sets, unique to this replacement: finds the new instance after a crash. */
    marker: text().notNull(),
    createAttemptedAt: integer(),
    newInstanceId: text(),
    /** Until when the new instance may take to reach running (LOADING_TIMEOUT_S after create). */
    deadlineAt: integer(),
    error: text(),
    /** The operator who approved, rejected or cancelled it. */
    operator: text(),
    /**
     * The provider account the old instance lives in (provider name and a fingerprint of its key):
     * one death is replaced once per account, whichever agents see it.
     */
    account: text(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    finishedAt: integer(),
  },
  (t) => [
    index("replacements_agent").on(t.agentId, t.status),
    // One open replacement per old instance: a second proposal is the same one.
    uniqueIndex("replacements_open")
      .on(t.agentId, t.oldInstanceId)
      .where(sql`status not in ('done', 'failed', 'rejected', 'expired', 'cancelled')`),
    // One open replacement per dead instance per provider account, across agents.
    uniqueIndex("replacements_account_open")
      .on(t.account, t.oldInstanceId)
      .where(sql`account is not null and status not in ('done', 'failed', 'rejected', 'expired', 'cancelled')`),
  ],
);

/**
 * A human's "no": a rejected approval blocks the same action kind on the same instance for the
 * agent and the rules policy until `until`, unless a human lifts it (approving a request asked
 * for in chat, or DELETE /api/agents/:agent/blocks/:id).
 */
export const actionBlocks = sqliteTable(
  "action_blocks",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    instanceId: text().notNull(),
    kind: text().notNull(),
    approvalId: integer().notNull(),
    /** Who said no: "a human via the operator API", "a human via the dashboard", "a human via Slack". */
    rejectedBy: text().notNull(),
    note: text(),
    rejectedAt: integer().notNull(),
    until: integer().notNull(),
    liftedAt: integer(),
    liftedBy: text(),
  },
  (t) => [
    uniqueIndex("action_blocks_approval").on(t.agentId, t.approvalId),
    index("action_blocks_subject").on(t.agentId, t.instanceId, t.kind),
  ],
);

/** The simulated fleet's own truth (the "provider side"); instances above is fleetwarden's view. */
export const simulatorInstances = sqliteTable("simulator_instances", {
  id: text().primaryKey(),
  state: text().notNull(),
  label: text(),
  gpuName: text().notNull(),
  gpuCount: integer().notNull(),
  pricePerHour: real().notNull(),
  statusMessage: text(),
  startedAt: integer(),
  /** Scripted failure in effect: exit | oom | stuck_loading | host_offline, or null. */
  failure: text(),
  /** Up to when random failures have been rolled, so every tick rolls only for time not yet rolled. */
  failuresRolledAt: integer(),
  destroyed: integer({ mode: "boolean" }).notNull().default(false),
  updatedAt: integer().notNull(),
});
