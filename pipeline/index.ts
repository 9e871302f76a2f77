/**
 * The pipeline's one public entry point: the inbox, debounce, lease, claim, finish, hand-back,
 * wakes, the tick engine and the scheduler contract with its adapters. Code outside pipeline/
 * imports it from here only (test/foundation/layering.test.ts holds every import to that).
 */
export * from "./agent-state.ts";
export * from "./agents.ts";
export * from "./claim-run.ts";
export * from "./cron-plan.ts";
export * from "./cron-tick.ts";
export * from "./deps.ts";
export * from "./finish-run.ts";
export * from "./ingest.ts";
export * from "./ingest-writes.ts";
export * from "./lease.ts";
export * from "./local-scheduler.ts";
export * from "./perform-run.ts";
export * from "./qstash-scheduler.ts";
export * from "./request-run.ts";
export * from "./reset-session.ts";
export * from "./retention.ts";
export * from "./run-fence.ts";
export * from "./run-step.ts";
export * from "./scheduler.ts";
export * from "./scheduler-backlog.ts";
export * from "./scheduler-health.ts";
export * from "./tick-plan.ts";
export * from "./wake-budget.ts";
export * from "./wakes.ts";
