/**
 * Chat without an LLM (issue #38 item 3): the rules policy understands the few commands an
 * operator types — stop/start/reboot/destroy INSTANCE, status, pause, resume — and carries an
 * instance command out as THAT operator's own action through executeAction (decidedBy human, the
 * operator named on the record, the approval and the activity log), so the action table's gates
 * (approval list, two-person rule, spend limit, fleet breaker) apply exactly as on the instance
 * page; pause and resume are the overview's switch as that operator (deps.switchMode,
 * jobs/agent-mode.ts: audited, a resume hands over). Anything else is answered plainly: without an
 * LLM chat cannot act, with the page that can. Never "no action was needed" for a message. The operator's role is read again
 * when the run decides (a viewer, or a revoked operator, cannot act). Bounded by the messages the
 * run consumed: one command per message, its idempotency key the message's event id, so a
 * repeated run of the same message does not act twice.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { FleetDeps } from "../../fleet/deps.ts";
import type { AgentDeps } from "../deps.ts";
import type { ConsumedEvent, RunFence } from "../../pipeline/index.ts";
import { actions, approvals, type instances } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import type { ActionKind, ActionResult } from "../../fleet/actions/action-types.ts";
import { activityInsert } from "../../auth/activity.ts";
import { principalForId } from "../../auth/operators-store.ts";
import { hasRole, type Principal } from "../../auth/roles.ts";
import { approvalLink, instanceLink } from "../../notify/approval-links.ts";

type InstanceRow = typeof instances.$inferSelect;

/** What an operator's message asks, as the rules policy reads it. */
export type ChatCommand =
  | { kind: "instance"; action: ActionKind; instanceId: string }
  | { kind: "status" }
  | { kind: "mode"; to: "pause" | "resume" }
  | null;

const INSTANCE_COMMAND = /^(?:please\s+)?(stop|start|reboot|destroy)\s+(?:instance\s+)?(\S+?)(?:\s+please)?[.!]*$/i;

/** The command in a message's text, or null when it is none of the few understood. */
export function parseChatCommand(text: string): ChatCommand {
  const t = text.trim().replace(/\s+/g, " ");
  const m = INSTANCE_COMMAND.exec(t);
  if (m) return { kind: "instance", action: m[1]!.toLowerCase() as ActionKind, instanceId: m[2]! };
  const word = t
    .toLowerCase()
    .replace(/^please /, "")
    .replace(/[.!?]+$/, "");
  if (word === "status") return { kind: "status" };
  if (word === "pause" || word === "resume") return { kind: "mode", to: word };
  return null;
}

interface ChatContext {
  agentId: string;
  runId: number;
  fence: RunFence | null;
}

const DONE: Record<string, string> = { start: "Started", stop: "Stopped", reboot: "Rebooted", destroy: "Destroyed" };

/**
 * The answer to each human message the run consumed, in order, after carrying out the command it
 * names. `mutated` when an action or approval was written.
 */
export async function answerChat(
  deps: FleetDeps & Pick<AgentDeps, "switchMode">,
  context: ChatContext,
  events: readonly ConsumedEvent[],
  fleet: readonly InstanceRow[],
  fleetState: string,
): Promise<{ answers: string[]; mutated: boolean }> {
  const answers: string[] = [];
  let mutated = false;
  const fleetPage = link(deps, context.agentId, "/fleet");
  for (const event of events.filter((e) => e.source === "human")) {
    const payload = (event.payload ?? {}) as { text?: unknown; operator?: unknown; operatorId?: unknown };
    const text = typeof payload.text === "string" ? payload.text : "";
    const command = parseChatCommand(text);
    if (command === null) {
      answers.push(
        `Without an LLM, chat cannot act on "${clip(text)}": it understands only stop/start/reboot/destroy INSTANCE, status, pause and resume. Fleet: ${fleetState}. Act on an instance from its page (${fleetPage}), or configure an LLM.`,
      );
      continue;
    }
    if (command.kind === "status") {
      answers.push(
        `Status: ${fleetState}.${fleet.length ? ` ${fleet.map((i) => `${i.id} ${i.state}`).join(", ")}.` : ""} Fleet page: ${fleetPage}`,
      );
      continue;
    }
    const who = await currentOperator(deps, payload);
    const asked = command.kind === "mode" ? command.to : `${command.action} ${command.instanceId}`;
    if (!who || !hasRole(who, "operator")) {
      answers.push(
        `Did not ${asked}: ${who ? `${who.name} is a ${who.role}, and only an operator can act` : "the message names no current operator"}. Nothing was done.`,
      );
      continue;
    }
    if (command.kind === "mode") {
      const overview = link(deps, context.agentId, "/");
      if (!deps.switchMode) {
        answers.push(`Chat cannot ${command.to} the agent here. Use the pause switch on the overview (${overview}).`);
        continue;
      }
      const to = command.to === "pause" ? "shadow" : "act";
      const { previous } = await deps.switchMode(who, to);
      mutated = true;
      answers.push(
        previous === to
          ? `The agent was already ${to === "shadow" ? "paused (shadow mode)" : "acting"}; ${who.name}'s ${command.to} is recorded. ${overview}`
          : to === "shadow"
            ? `Paused as ${who.name} asked: shadow mode, the agent proposes and nothing is done without a human. "resume" or the overview's switch undoes it: ${overview}`
            : `Resumed as ${who.name} asked: the agent acts again, and decides next on what happened while it was paused. ${overview}`,
      );
      continue;
    }
    const instance = fleet.find((i) => i.id === command.instanceId);
    if (!instance) {
      answers.push(
        `Did not ${command.action} ${command.instanceId}: no such instance in this agent's fleet. Fleet: ${fleetState}. Fleet page: ${fleetPage}`,
      );
      continue;
    }
    const result = await executeAction(deps, {
      agentId: context.agentId,
      runId: context.runId,
      instanceId: instance.id,
      kind: command.action,
      decidedBy: "human",
      idempotencyKey: `chat:${event.id}:${command.action}:${instance.id}`,
      fence: context.fence,
      reason: `operator action from chat by ${who.name}: "${clip(text)}"`,
      operator: who.name,
    });
    if (!result.repeated && result.actionId) {
      mutated = true;
      await attribute(deps, who, context.agentId, command.action, instance.id, result.actionId);
    }
    answers.push(describe(deps, context.agentId, who, command.action, instance.id, result));
  }
  return { answers, mutated };
}

function describe(deps: FleetDeps, agentId: string, who: Principal, kind: ActionKind, instanceId: string, result: ActionResult): string {
  const page = instanceLink(deps.config, agentId, instanceId);
  const again = result.repeated ? " (already done for this message)" : "";
  switch (result.status) {
    case "succeeded":
      return `${DONE[kind] ?? kind} ${instanceId} as ${who.name} asked (action #${result.actionId})${again}. ${page}`;
    case "awaiting_approval":
      return `${kind} ${instanceId} needs a human's approval: approval #${result.approvalId} requested by ${who.name}${again}. Nothing is done until it is approved: ${result.approvalId ? approvalLink(deps.config, agentId, result.approvalId) : page}`;
    case "proposed":
      return `${kind} ${instanceId} was only proposed (shadow mode): nothing was done${again}. ${page}`;
    default:
      return `Did not ${kind} ${instanceId}: ${result.status}${result.error ? ` — ${result.error}` : ""}${again}. ${page}`;
  }
}

/** The message's operator as they are now: a viewer, or a revoked operator, cannot act. */
async function currentOperator(deps: FleetDeps, payload: { operator?: unknown; operatorId?: unknown }): Promise<Principal | null> {
  if (typeof payload.operatorId !== "number" || typeof payload.operator !== "string") return null;
  const who = await principalForId(deps.db, payload.operatorId);
  return who && who.name === payload.operator ? who : null;
}

/** Names the operator on what the action wrote, as jobs/operator-instance-action.ts does for the page. */
async function attribute(deps: FleetDeps, who: Principal, agentId: string, kind: ActionKind, instanceId: string, actionId: number) {
  const { db } = deps;
  await db.batch([
    db
      .update(actions)
      .set({ operator: who.name })
      .where(and(eq(actions.id, actionId), isNull(actions.operator))),
    db
      .update(approvals)
      .set({ requestedBy: who.name })
      .where(and(eq(approvals.actionId, actionId), eq(approvals.requestedBy, "human"))),
    activityInsert(db, who, { action: "instance_action", agentId, subject: `${kind} ${instanceId} #${actionId}`, at: deps.clock.now() }),
  ]);
}

function link(deps: FleetDeps, agentId: string, path: string): string {
  return `${(deps.config.publicUrl ?? "").replace(/\/$/, "")}${path}?agent=${encodeURIComponent(agentId)}`;
}

const clip = (text: string) => (text.length > 80 ? `${text.slice(0, 79)}…` : text);
