/**
 * The pipeline's one public entry point: what code outside pipeline/ (product code, tests,
 * benchmarks, eval) uses of the inbox, debounce, lease, claim, finish, hand-back, wakes, the tick
 * engine and the scheduler contract with its adapters, and nothing more. Product code imports the
 * pipeline from here only (test/foundation/layering.test.ts holds every import to that, and
 * test/foundation/folders.test.ts holds every name here to being used outside pipeline/); a test
 * that needs an internal imports its module by path. A name becomes public by being added here.
 */

// The ports the pipeline needs, and the scheduler contract with its two adapters.
export type { PipelineDeps } from "./deps.ts";
export { publishAll, type DeliveryBody, type PublishRequest, type Scheduler } from "./scheduler.ts";
export { backoffMs, LocalScheduler, MAX_ATTEMPTS } from "./local-scheduler.ts";
export { defaultFlowPrefix, deliveriesUrl, QStashScheduler, qstashSchedulerFromConfig, toQStashId } from "./qstash-scheduler.ts";
export { MonitoredScheduler, readSchedulerHealth, schedulerHealthRead, writeSchedulerHealth } from "./scheduler-health.ts";
export { schedulerBacklog } from "./scheduler-backlog.ts";

// Agents: the rows every other table hangs off.
export {
  AGENT_ROW_TTL_MS,
  archiveAgent,
  createAgent,
  DEFAULT_AGENT,
  ensureAgent,
  findAgent,
  findAgentRecent,
  listActiveAgentIds,
  listAgentIds,
  listAgents,
  restoreAgent,
  rotateWebhookSecret,
  updateAgent,
  type AgentRow,
} from "./agents.ts";

// The inbox and the debounced run request (invariants: one insert, one debounce).
export {
  commitIngest,
  ingestEvent,
  ingestStatements,
  publishAfterIngest,
  type IncomingEvent,
  type Ingested,
  type MovedRun,
  type StoredEvent,
} from "./ingest.ts";
export { ingestWrites } from "./ingest-writes.ts";
export { debounceWindow, requestRun, scheduleIfPending } from "./request-run.ts";

// The run: claim, the step the layers above supply, fenced writes under the lease, crash recovery.
export { claimRun } from "./claim-run.ts";
export { performRun } from "./perform-run.ts";
export type { ConsumedEvent, ConsumedWake, ConversationTurn, RunContext, RunOutcome, RunStep } from "./run-step.ts";
export { fencedWrite, FenceLostError, leaseRemainingMs, leaseRenewal, renewLease, type RunFence } from "./run-fence.ts";
export { recoverDeadLease } from "./lease.ts";
export { resetSession } from "./reset-session.ts";

// Wakes: scheduled re-checks and the self-wake budget.
export { cancelWake, createWake, handleWakeDelivery, listWakes, rebaseWakesOnClockStep, WakeLimitError } from "./wakes.ts";
export { scheduleSelfWake, selfWakesInHour, wakeBudgetFrom, WakeBudgetError } from "./wake-budget.ts";

// The tick: its checks, what is due, the repair of a stalled pipeline, retention.
export {
  combineWrites,
  defineTickCheck,
  runTickCheck,
  runTickChecks,
  writesNothing,
  type AnyTickCheck,
  type TickStatement,
  type TickWrites,
} from "./tick-plan.ts";
export { chooseInline, dueRunSlots, readCronState, type CronState } from "./cron-plan.ts";
export { agentTick, OVERDUE_MS, scheduleRepair, type AgentTick } from "./cron-tick.ts";
export { HISTORY_RETENTION_MS, pruneOldRecords, RETENTION_MS, SLICE } from "./retention.ts";

// Read models of the pipeline's own tables, for the API and the dashboard.
export { getAgentState, getRun, listEvents, listRuns, presentRun } from "./agent-state.ts";
