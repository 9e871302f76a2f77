/**
 * One cron invocation (the Worker's `scheduled` handler, the Node interval, POST /api/cron?fanout=1):
 * QStash is the delivery channel, never a single point of silence, and an idle agent costs it no
 * message.
 *
 * 1. One read (pipeline/cron-plan.ts): the active agents, what is due for each, the scheduler's
 *    recorded health.
 * 2. While the record says publishes are refused, one probe publish (a tick delivery of the first
 *    agent, deduplicated per minute) finds out whether QStash takes messages again; if it does,
 *    the record is cleared.
 * 3. Up to CRON_INLINE_AGENTS agents are ticked here, in this invocation (due ones first, rotating);
 *    only the due agents left over get a tick delivery through the scheduler, so an agent with
 *    nothing due publishes nothing.
 * 4. While publishes are refused (as recorded, or by this invocation's own publishes), the due runs
 *    are claimed and performed here, up to CRON_INLINE_RUNS, oldest first: an event accepted while
 *    QStash refuses is still answered, within two cron invocations. A QStash delivery of the same
 *    slot arriving later finds it claimed (stale) and does nothing.
 * 5. Retention.
 * 6. The dead-man ping (DEADMAN_URL, jobs/deadman-ping.ts): once, when the invocation completes.
 * A database refusing for its plan's quota or size (in the first read, or an agent's tick) is told
 * straight to the channels, once an hour per process (notify/database-refusal.ts).
 *
 * First of all, a backward step of the host's wall clock since the last invocation moves pending
 * wakes back by the step (pipeline/wakes.ts rebaseWakesOnClockStep; no round trip without a step).
 *
 * Bounds: at most CRON_INLINE_AGENTS ticks, one probe and CRON_INLINE_RUNS runs per invocation;
 * ticks and the probe are deduplicated per agent and minute. Nothing here throws for one agent's
 * failure; a failed first read is thrown to the host (which logs it).
 */
import type { Deps } from "./deps.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import {
  chooseInline,
  dueRunSlots,
  performRun,
  readCronState,
  rebaseWakesOnClockStep,
  writeSchedulerHealth,
  type CronState,
} from "../pipeline/index.ts";
import { prune, publishTicks, tickAgent } from "./tick.ts";
import { withAgent } from "./with-agent.ts";
import { pingDeadman } from "./deadman-ping.ts";
import { noteDatabaseError } from "../notify/database-refusal.ts";

export interface ScheduledTickReport {
  /** Agents ticked in this invocation. */
  inline: string[];
  /** Agents whose tick was published as a delivery. */
  fannedOut: string[];
  /** Runs this invocation performed itself because the scheduler refused publishes. */
  ran: { agentId: string; slot: number; result: string }[];
  /** Whether the invocation found the scheduler refusing (recorded, or its own publishes). */
  schedulerFailing: boolean;
}

export async function runScheduledTick(deps: Deps): Promise<ScheduledTickReport> {
  try {
    return await scheduledTick(deps);
  } catch (err) {
    // A database refusing for quota or size is told directly (once an hour), never only logged.
    await noteDatabaseError(deps, err);
    // The invocation failed: the dead-man check hears `<url>/fail` now, not only a missing ping.
    await pingDeadman(deps);
    throw err;
  }
}

async function scheduledTick(deps: Deps): Promise<ScheduledTickReport> {
  await rebaseWakesOnClockStep(deps).catch((err: unknown) =>
    deps.log.error("moving wakes after a clock step failed", { error: String(err) }),
  );
  const now = deps.clock.now();
  const minute = Math.floor(now / MINUTE_MS);
  const state = await readCronState(deps, now);
  let refusing = !state.health.ok && !(await probeScheduler(deps, state, minute, now));

  const { inline, fanOut } = chooseInline(state.agents, deps.config.cron.inlineAgents, minute);
  for (const agentId of inline) {
    await tickAgent(deps, agentId).catch(async (err: unknown) => {
      deps.log.error("cron tick of an agent failed", { agentId, error: String(err) });
      await noteDatabaseError(deps, err);
    });
  }
  let fannedOut: string[] = [];
  if (fanOut.length > 0 && !refusing) {
    try {
      await publishTicks(deps, fanOut, now);
      fannedOut = fanOut;
    } catch (err) {
      refusing = true;
      deps.log.error("fanning out tick deliveries failed", { agents: fanOut, error: String(err) });
    }
  }
  const schedulerFailing = !state.health.ok || refusing;
  const ran = schedulerFailing ? await performDueRuns(deps) : [];
  await prune(deps);
  // Bound: one ping per invocation, 5 s at most; it never throws.
  await pingDeadman(deps);
  return { inline, fannedOut, ran, schedulerFailing };
}

/**
 * One publish to learn whether the scheduler takes messages again: true when it did (and the
 * record now says so, whatever this process last wrote). Deduplicated per minute, so repeated
 * invocations within a minute add no message.
 */
async function probeScheduler(deps: Deps, state: CronState, minute: number, now: number): Promise<boolean> {
  const agentId = state.agents[0]?.agentId;
  if (!agentId) return false;
  try {
    await deps.scheduler.publish({ dedupKey: `probe:${minute}`, notBefore: now, body: { type: "tick", agentId } });
  } catch {
    return false;
  }
  await writeSchedulerHealth(deps, deps.scheduler.kind, "ok");
  deps.log.info("the scheduler takes publishes again", { kind: deps.scheduler.kind });
  return true;
}

/** The due runs, performed here with their agents' settings (at most CRON_INLINE_RUNS). */
async function performDueRuns(deps: Deps): Promise<ScheduledTickReport["ran"]> {
  const ran: ScheduledTickReport["ran"] = [];
  for (const { agentId, slot } of await dueRunSlots(deps, deps.clock.now(), deps.config.cron.inlineRuns)) {
    const scope = await withAgent(deps, agentId);
    if (!scope || scope.archived) continue;
    const result = await performRun(scope.deps, agentId, slot).catch((err: unknown) => `error: ${String(err)}`);
    deps.log.info("cron invocation performed a run itself (the scheduler refuses publishes)", { agentId, slot, result });
    ran.push({ agentId, slot, result });
  }
  return ran;
}
