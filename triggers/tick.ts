/**
 * The cron tick with its fleet checks wired in: the one function the Worker's `scheduled`
 * handler, the Node interval and `POST /api/cron` all call.
 */
import type { Deps } from "../runtime/deps.ts";
import { cronTick, type TickCheck } from "./cron-tick.ts";

/** Fleet checks run by every tick, after the pipeline's own repairs. */
export const FLEET_CHECKS: readonly TickCheck[] = [];

export function runCronTick(deps: Deps) {
  return cronTick(deps, FLEET_CHECKS);
}
