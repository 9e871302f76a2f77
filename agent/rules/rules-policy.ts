/**
 * The deterministic fallback that decides when no LLM is configured or the LLM is failing:
 * restart an instance that exited unexpectedly, at most RULES_MAX_RESTARTS_PER_HOUR times an hour
 * (and look again in a few minutes); tell a human when restarts are exhausted or fail, or when an
 * instance this run heard about is offline or unknown; answer a human message (and carry out the operator's own command, rules-chat.ts) with the fleet's
 * state; escalate what does not get better (rules-escalation.ts). Every action goes through
 * executeAction (decidedBy `rules`), so the audit, rate limit, approvals and a human's rejection
 * hold here too. Same inputs, same decisions. What the provider cannot do (fleet/providers/capabilities.ts)
 * is not attempted: a human is told once per instance and episode instead.
 * Stalls and silent instances are acted on by the cron tick, decided by `rules`, whoever decides
 * the runs (like idleness, rules-economics.ts): a stalled instance is told once and gets the
 * agent's STALL_ACTION through the action table (fleet/instances/stall-check.ts); a silent webhook
 * reporter the provider says runs is told once as unreachable (fleet/instances/heartbeat-reread.ts).
 */
import { and, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import type { FleetDeps } from "../../fleet/deps.ts";
import { HOUR_MS, MINUTE_MS } from "../../runtime/time.ts";
import type { PipelineDeps, RunContext } from "../../pipeline/index.ts";
import { actions, instances } from "../../schema/index.ts";
import { answeringActionKey } from "../../fleet/actions/action-key.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { lacks, tellUnsupportedOnce } from "../../fleet/providers/capabilities.ts";
import { actionEvidence } from "../action-evidence.ts";
import { blockingRejection, describeBlock } from "../../fleet/actions/action-blocks.ts";
import { escalateByRules, type Notify } from "./rules-escalation.ts";
import { economicsByRules } from "./rules-economics.ts";
import { replaceByRules } from "./rules-replacement.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { WakeLimitError } from "../../pipeline/index.ts";
import { scheduleSelfWake, WakeBudgetError } from "../../pipeline/index.ts";
import { answerChat } from "./rules-chat.ts";

export const RECHECK_AFTER_MS = 5 * MINUTE_MS;
/** States that a restart cannot fix from here, but a human should know about. */
const ATTENTION_STATES = new Set(["offline", "unknown", "frozen"]);

export interface RulesDecision {
  mutated: boolean;
  /** One line per decision, for the run's record and the conversation. */
  decisions: string[];
  /** The answer to a human message, when the run consumed one. */
  reply: string | null;
}

type Context = Pick<RunContext<AgentDeps>, "agentId" | "runId" | "events" | "wakes" | "fence">;

export async function decideByRules(
  deps: FleetDeps & Pick<AgentDeps, "switchMode">,
  context: Context,
  why: string,
): Promise<RulesDecision> {
  const { db, clock, config } = deps;
  const { agentId, runId } = context;
  const now = clock.now();
  const fleet = await db
    .select()
    .from(instances)
    .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt)))
    .orderBy(instances.id);
  const decisions: string[] = [];
  let mutated = false;
  const notify: Notify = async (instanceId, title, body, severity, dedupKey) => {
    const sent = await notifyHuman(deps, { agentId, runId, title, body, severity, dedupKey, instanceId, fence: context.fence });
    if (!sent.deduplicated && !sent.refused) mutated = true;
    decisions.push(
      `notified a human: ${title}${sent.deduplicated ? " (already notified recently)" : sent.refused ? ` (${sent.refused})` : ""}`,
    );
  };

  // An operator's chat command first (rules-chat.ts): it is their own action, not the policy's.
  const chat = await answerChat(deps, context, context.events, fleet, fleetStates(fleet));
  if (chat.mutated) mutated = true;

  const outbid = await economicsByRules(context, notify, decisions);
  for (const instance of fleet.filter((i) => i.state === "exited" && !outbid.has(i.id))) {
    const restarts = await recentRestarts(deps, agentId, instance.id, now);
    if (restarts >= config.rulesMaxRestartsPerHour) {
      await notify(
        instance.id,
        `Instance ${instance.id} keeps failing`,
        `${instance.id} exited again after ${restarts} restart attempts in the last hour; the rules policy stopped restarting it. Last message: ${instance.statusMessage ?? "none"}.`,
        "critical",
        `rules:repeated-failure:${instance.id}`,
      );
      continue;
    }
    const cannot = lacks(deps.provider, "start");
    if (cannot) {
      const told = await tellUnsupportedOnce(deps, {
        agentId,
        runId,
        fence: context.fence,
        instanceId: instance.id,
        kind: "start",
        situation: "exited",
        episode: instance.stateAt,
      });
      if (told) mutated = true;
      decisions.push(`did not restart ${instance.id}: ${cannot.message}${told ? "; told a human" : ""}`);
      continue;
    }
    const block = await blockingRejection(deps, { agentId, instanceId: instance.id, kind: "start", decidedBy: "rules", runId });
    if (block) {
      decisions.push(`did not restart ${instance.id}: ${describeBlock(block)}`);
      continue;
    }
    const result = await executeAction(deps, {
      agentId,
      runId,
      instanceId: instance.id,
      kind: "start",
      decidedBy: "rules",
      idempotencyKey: answeringActionKey(agentId, instance.id, "start", context),
      fence: context.fence,
      evidence: await actionEvidence(deps, agentId, instance.id, context),
      reason: `rules policy: instance exited unexpectedly (restart ${restarts + 1} of at most ${config.rulesMaxRestartsPerHour} per hour)`,
    });
    // Shadow mode records a proposal; a bound's refusal was already told to a human once (fleet/actions/bounds.ts).
    if (result.status === "proposed" || result.status === "refused") {
      decisions.push(
        result.status === "proposed"
          ? `would have restarted ${instance.id} (shadow mode: proposed)`
          : `did not restart ${instance.id}: ${result.error}`,
      );
      continue;
    }
    if (result.status === "succeeded" || result.status === "awaiting_approval") {
      if (!result.repeated) mutated = true;
      decisions.push(
        `restarted ${instance.id} (exited; restart ${restarts + 1}/${config.rulesMaxRestartsPerHour} this hour): ${result.status}`,
      );
      // An approval's decision wakes the agent by itself; only a restart done needs a re-check.
      if (result.status === "succeeded" && !result.repeated)
        await scheduleRecheck(deps, context, instance.id, decisions, () => (mutated = true));
    } else {
      await notify(
        instance.id,
        `Restart of ${instance.id} failed`,
        `The rules policy tried to restart ${instance.id} (exited) and got: ${result.status}${result.error ? ` — ${result.error}` : ""}.`,
        "warning",
        `rules:restart-failed:${instance.id}`,
      );
    }
  }

  const mentioned = new Set(
    context.events.map((e) => (e.payload as { instanceId?: unknown } | null)?.instanceId).filter((id) => typeof id === "string"),
  );
  for (const instance of fleet.filter((i) => ATTENTION_STATES.has(i.state) && mentioned.has(i.id))) {
    await notify(
      instance.id,
      `Instance ${instance.id} is ${instance.state}`,
      `${instance.id} reported ${instance.state} at ${new Date(instance.stateAt).toISOString()}${instance.statusMessage ? ` (${instance.statusMessage})` : ""}. The rules policy cannot fix this; please take a look.`,
      "warning",
      `rules:attention:${instance.id}:${instance.state}`,
    );
  }

  if (await escalateByRules(deps, context, fleet, notify, decisions)) mutated = true;
  if (await replaceByRules(deps, context, decisions)) mutated = true;

  const human = context.events.some((e) => e.source === "human");
  const reply = human ? composeReply(why, chat.answers, decisions) : null;
  return { mutated, decisions, reply };
}

async function recentRestarts(deps: Pick<AgentDeps, "db">, agentId: string, instanceId: string, now: number): Promise<number> {
  const [row] = await deps.db
    .select({ count: sql<number>`count(*)` })
    .from(actions)
    .where(
      and(
        eq(actions.agentId, agentId),
        eq(actions.instanceId, instanceId),
        inArray(actions.kind, ["start", "reboot"]),
        inArray(actions.status, ["succeeded", "failed", "pending"]),
        gt(actions.createdAt, now - HOUR_MS),
      ),
    );
  return Number(row?.count ?? 0);
}

async function scheduleRecheck(deps: PipelineDeps, context: Context, instanceId: string, decisions: string[], onCreated: () => void) {
  try {
    const wake = await scheduleSelfWake(deps, context.agentId, {
      dueAt: deps.clock.now() + RECHECK_AFTER_MS,
      reason: `rules policy: check that ${instanceId} came back after its restart`,
      createdByRun: context.runId,
      fence: context.fence,
      instanceId,
      awaitState: "running",
    });
    onCreated();
    decisions.push(`scheduled a re-check of ${instanceId} at ${new Date(wake.dueAt).toISOString()}`);
  } catch (err) {
    if (!(err instanceof WakeLimitError || err instanceof WakeBudgetError)) throw err;
    decisions.push(`could not schedule a re-check of ${instanceId}: ${err.message}`);
  }
}

function fleetStates(fleet: readonly (typeof instances.$inferSelect)[]): string {
  const counts = new Map<string, number>();
  for (const i of fleet) counts.set(i.state, (counts.get(i.state) ?? 0) + 1);
  return [...counts].map(([state, n]) => `${n} ${state}`).join(", ") || "no instances known";
}

/** The answer to the run's messages (rules-chat.ts), then what the policy did by itself, if anything. */
function composeReply(why: string, answers: readonly string[], decisions: readonly string[]): string {
  const done = decisions.length ? ` The rules policy also did, this run: ${decisions.join("; ")}.` : "";
  return `The automatic rules policy answered (${why}). ${answers.join(" ")}${done}`;
}
