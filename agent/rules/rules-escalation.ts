/**
 * Escalation, never silence, for the rules policy: what it does when an instance does not get
 * where it should.
 * - Stuck in created/loading past LOADING_TIMEOUT_S (an `overdue` event): reboot it once (per
 *   instance per 24 h), and when that did not help, or cannot be done (a provider without
 *   reboot: fleet/providers/capabilities.ts), tell a human.
 * - An action's expectation that expired unmet on anything but a crash (exited has its own
 *   restart rule): tell a human.
 * - A re-check wake whose instance is still not in the state it was waiting for: tell a human.
 * Every notification is keyed per instance, so repeats inside the dedup window page nobody.
 */
import { and, eq, gt, like } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import type { FleetDeps } from "../../fleet/deps.ts";
import type { RunContext } from "../../pipeline/index.ts";
import { actions, type instances, wakes } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { lacks } from "../../fleet/providers/capabilities.ts";
import { actionEvidence } from "../action-evidence.ts";
import { blockingRejection, describeBlock } from "../../fleet/actions/action-blocks.ts";
import { LOADING_STATES, stuckPast } from "../../fleet/instances/overdue-states.ts";

export type Notify = (instanceId: string, title: string, body: string, severity: "warning" | "critical", dedupKey: string) => Promise<void>;

type Context = Pick<RunContext<AgentDeps>, "agentId" | "runId" | "events" | "wakes">;
type InstanceRow = typeof instances.$inferSelect;

/** How long one stuck-loading reboot counts: within it, a second stuck episode goes to a human. */
export const STUCK_REBOOT_WINDOW_MS = 24 * 3_600_000;

const iso = (ms: number) => new Date(ms).toISOString();
const isLoading = (state: string) => (LOADING_STATES as readonly string[]).includes(state);

/** Returns whether anything was done (an action taken); notifications are counted by `notify`. */
export async function escalateByRules(
  deps: FleetDeps,
  context: Context,
  fleet: readonly InstanceRow[],
  notify: Notify,
  decisions: string[],
): Promise<boolean> {
  let acted = false;
  const byId = new Map(fleet.map((i) => [i.id, i]));
  const overdue = new Map<string, Record<string, unknown>>();
  for (const e of context.events) {
    const p = (e.payload ?? {}) as Record<string, unknown>;
    if (e.source === "overdue" && typeof p.instanceId === "string") overdue.set(p.instanceId, p);
  }

  for (const [instanceId, payload] of overdue) {
    const instance = byId.get(instanceId);
    if (!instance) continue;
    if (isLoading(instance.state)) {
      if (await rebootStuckOnce(deps, context, instance, notify, decisions)) acted = true;
    } else if (instance.state !== "exited" && payload.overdue === "expectation" && instance.state !== payload.expectedState) {
      await notify(
        instance.id,
        `Instance ${instance.id} did not come back`,
        `${instance.id} was expected to be ${String(payload.expectedState)} by ${String(payload.expectedBy)} after an action; it is ${instance.state} since ${iso(instance.stateAt)}.`,
        "warning",
        `rules:not-back:${instance.id}`,
      );
    }
  }

  for (const wake of await recheckWakes(deps, context)) {
    const instance = byId.get(wake.instanceId!);
    if (!instance || instance.state === wake.awaitState || overdue.has(instance.id)) continue;
    await notify(
      instance.id,
      `Instance ${instance.id} still not ${wake.awaitState} at its re-check`,
      `Re-check #${wake.id} (${wake.reason}) expected ${instance.id} to be ${wake.awaitState}; it is ${instance.state} since ${iso(instance.stateAt)}${instance.statusMessage ? ` (${instance.statusMessage})` : ""}.`,
      "warning",
      `rules:recheck:${instance.id}`,
    );
  }
  return acted;
}

async function rebootStuckOnce(
  deps: FleetDeps,
  context: Context,
  instance: InstanceRow,
  notify: Notify,
  decisions: string[],
): Promise<boolean> {
  const { agentId, runId } = context;
  const keyPrefix = `rules:${agentId}:stuck:${instance.id}:`;
  const [earlier] = await deps.db
    .select({ id: actions.id, createdAt: actions.createdAt })
    .from(actions)
    .where(
      and(
        eq(actions.agentId, agentId),
        like(actions.idempotencyKey, `${keyPrefix}%`),
        gt(actions.createdAt, deps.clock.now() - STUCK_REBOOT_WINDOW_MS),
      ),
    )
    .limit(1);
  const block = await blockingRejection(deps, { agentId, instanceId: instance.id, kind: "reboot", decidedBy: "rules", runId });
  const stuckFor = `${instance.state} since ${iso(instance.stateAt)}`;
  const cannot = lacks(deps.provider, "reboot");
  if (!earlier && !block && !cannot) {
    const result = await executeAction(deps, {
      agentId,
      runId,
      instanceId: instance.id,
      kind: "reboot",
      decidedBy: "rules",
      idempotencyKey: `${keyPrefix}${instance.stateAt}`,
      evidence: await actionEvidence(deps, agentId, instance.id, context),
      reason: `rules policy: ${stuckFor}, past LOADING_TIMEOUT_S; one reboot before telling a human`,
    });
    if (result.status === "succeeded" || result.status === "awaiting_approval") {
      decisions.push(`rebooted ${instance.id} (stuck ${stuckFor}): ${result.status}`);
      return !result.repeated;
    }
    decisions.push(`could not reboot stuck ${instance.id}: ${result.status}${result.error ? ` — ${result.error}` : ""}`);
  }
  const why = cannot
    ? `no reboot was tried: ${cannot.message}`
    : block
      ? describeBlock(block)
      : earlier
        ? `a reboot at ${iso(earlier.createdAt)} did not help`
        : "the reboot failed";
  await notify(
    instance.id,
    `Instance ${instance.id} is stuck ${instance.state}`,
    `${instance.id} is ${stuckFor}, ${stuckPast(instance, deps.clock.now(), deps.config.loadingTimeoutMs).text}; ${why}. Please take a look.`,
    "critical",
    `rules:stuck:${instance.id}`,
  );
  return false;
}

async function recheckWakes(deps: Pick<AgentDeps, "db">, context: Context) {
  if (context.wakes.length === 0) return [];
  const rows = await deps.db.select().from(wakes).where(eq(wakes.agentId, context.agentId));
  const consumed = new Set(context.wakes.map((w) => w.id));
  return rows.filter((w) => consumed.has(w.id) && w.instanceId !== null && w.awaitState !== null);
}
