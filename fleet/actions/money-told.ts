/**
 * Told, once, for every money move made without a human (issue #33, item 1): a start, stop,
 * reboot, destroy or replace that the rules policy, an economics rule or the LLM carried out
 * (the provider answered) reaches a human as one notification saying what was done, why (the
 * reason and the evidence it names) and what it changes per hour, from the instance's price and
 * storage in fleetwarden's view (fleet/economics/instance-cost.ts). A human's own action and an
 * approval carried out are not echoed back: the human who did it knows (the approval's decision
 * is told by fleet/actions/approval-told.ts). A replacement's own destroys are told by its stages
 * (fleet/replacement/replacement-told.ts), not here.
 *
 * Bounds: called only from the act path of carry-out.ts once the provider answered (before the
 * instance's implied state is recorded, so the cost before is still there to compare), which runs
 * once per claimed action (a repeated idempotency key answers with its record and never gets
 * here); the dedup key `money:<actionId>` folds any second store of it; and a run's notice goes
 * through the run's fence and counts against NOTIFICATIONS_PER_RUN / NOTIFICATIONS_PER_HOUR
 * (notify/notification-bounds.ts): past them it is refused and the run's bound notice says so.
 */
import { and, eq } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { costPerHour } from "../economics/instance-cost.ts";
import type { FleetDeps } from "../deps.ts";
import type { ActionKind, ActionRequest } from "./action-types.ts";

/** The kinds that change what the fleet costs (a label does not). */
export const MONEY_KINDS: ReadonlySet<ActionKind> = new Set(["start", "stop", "reboot", "destroy", "replace", "rent"]);

/** The replacement steps whose effect its stage notices tell (done, failed). */
const TOLD_BY_REPLACEMENT = /^replacement:\d+:destroy-(old|new)$/;

/** The state an action leaves the instance in, for what it costs afterwards. */
const AFTER: Record<Exclude<ActionKind, "label" | "replace" | "rent">, string> = {
  start: "running",
  reboot: "running",
  stop: "stopped",
  destroy: "gone",
};

export function moneyToldKey(actionId: number): string {
  return `money:${actionId}`;
}

/** Whether a succeeded action is one to tell: a money kind that no human decided. */
export function isToldMoneyMove(request: Pick<ActionRequest, "kind" | "decidedBy" | "idempotencyKey">): boolean {
  return request.decidedBy !== "human" && MONEY_KINDS.has(request.kind) && !TOLD_BY_REPLACEMENT.test(request.idempotencyKey);
}

/** Tells the money move once; never throws (the action happened whether or not the notice could be stored). */
export async function tellMoneyMove(
  deps: Pick<FleetDeps, "db" | "clock" | "config" | "scheduler" | "log">,
  request: ActionRequest,
  actionId: number,
): Promise<void> {
  if (!isToldMoneyMove(request)) return;
  try {
    const [row] = await deps.db
      .select({ state: instances.state, pricePerHour: instances.pricePerHour, storagePerHour: instances.storagePerHour })
      .from(instances)
      .where(and(eq(instances.agentId, request.agentId), eq(instances.id, request.instanceId)));
    const decider = request.decidedBy === "llm" ? (request.model ?? "the model") : "the rules";
    const title = `${pastTense(request.kind)} ${request.instanceId}: ${perHour(request.kind, row)}`;
    const lines = [
      `${decider} ${pastTense(request.kind).toLowerCase()} ${request.instanceId} without a human.`,
      `Why: ${request.reason ?? "no reason given"}`,
      `What it changes: ${perHour(request.kind, row)}.`,
      ...evidenceLine(request),
      `Action ${actionId} (${request.idempotencyKey}).`,
    ];
    await notifyHuman(deps, {
      agentId: request.agentId,
      runId: request.runId,
      fence: request.fence ?? null,
      title,
      body: lines.join("\n"),
      severity: "info",
      dedupKey: moneyToldKey(actionId),
      instanceId: request.instanceId,
    });
  } catch (err) {
    deps.log.error("money move not told", { agentId: request.agentId, actionId, kind: request.kind, error: String(err) });
  }
}

type CostRow = { state: string; pricePerHour: number | null; storagePerHour: number | null } | undefined;

/** "saves $2.10/h", "adds $0.42/h", or why it cannot be said. */
export function perHour(kind: ActionKind, row: CostRow): string {
  if (kind === "replace") return "a replacement is being searched for (each stage is told)";
  if (kind === "label") return "no change in cost";
  if (kind === "rent") return "a new instance on a lease (its $/h is in the reason)";
  if (!row) return "change per hour unknown (the instance is not in fleetwarden's view)";
  const before = costPerHour(row);
  const after = costPerHour({ ...row, state: AFTER[kind], goneAt: kind === "destroy" ? 1 : null });
  if (before === null || after === null) return "change per hour unknown (the provider reported no price for that state)";
  const delta = Math.round((after - before) * 100) / 100;
  if (delta < 0) return `saves $${(-delta).toFixed(2)}/h`;
  if (delta > 0) return `adds $${delta.toFixed(2)}/h`;
  return `costs the same ($${after.toFixed(2)}/h)`;
}

function pastTense(kind: ActionKind): string {
  switch (kind) {
    case "start":
      return "Started";
    case "stop":
      return "Stopped";
    case "reboot":
      return "Rebooted";
    case "destroy":
      return "Destroyed";
    case "replace":
      return "Approved the replacement of";
    case "label":
      return "Labelled";
    case "rent":
      return "Rented";
  }
}

function evidenceLine(request: ActionRequest): string[] {
  const e = request.evidence;
  if (!e) return [];
  const parts = [
    e.eventIds.length ? `events ${e.eventIds.join(", ")}` : "",
    e.wakeIds.length ? `wakes ${e.wakeIds.join(", ")}` : "",
    e.humanMessage ? `a human's message: "${e.humanMessage.text}"` : "",
  ].filter(Boolean);
  return parts.length ? [`Evidence: ${parts.join("; ")}`] : [];
}
