/** Every table, for drizzle's client and drizzle-kit. */
export * from "./agents.ts";
export * from "./pipeline.ts";
export * from "./conversation.ts";
export * from "./fleet.ts";
export * from "./notifications.ts";
export * from "./infra.ts";
export * from "./operators.ts";
export * from "./watchdog.ts";
export * from "./scheduler-health.ts";
export * from "./economics.ts";
export * from "./trust.ts";
export * from "./leases.ts";
