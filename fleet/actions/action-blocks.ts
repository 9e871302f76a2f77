/**
 * A human's "no" sticks (invariant 12). Rejecting an approval stores a block on that action kind
 * for that instance for APPROVAL_REJECT_COOLDOWN_S; while it is active, neither the LLM nor the
 * rules policy files the same request again (the action table refuses it, saying who rejected it
 * and when; the rules policy does not try it). Whether a block holds is decided in one place,
 * `blockingRejection`, which both call. A human lifts it by approving a request for the same action (one the agent filed
 * because a human asked for it in chat: a run answering a human message that names that instance
 * and that action may ask again, fleet/actions/human-asks.ts), or by DELETE /api/agents/:agent/blocks/:id.
 * Any other chat ("good morning") lifts nothing. Blocks are never deleted, only lifted or expired.
 */
import { and, desc, eq, gt, isNull } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actionBlocks, type approvals, events } from "../../schema/index.ts";
import type { ActionRequest } from "./action-types.ts";
import { asksFor, humanText } from "./human-asks.ts";

export type ActionBlock = typeof actionBlocks.$inferSelect;
type Reader = Pick<FleetDeps, "db" | "clock">;

const iso = (ms: number) => new Date(ms).toISOString();

/** Stores the block a rejection causes; a repeated rejection of the same approval stores nothing. */
export async function recordRejection(
  deps: Pick<FleetDeps, "db" | "clock" | "config">,
  approval: typeof approvals.$inferSelect,
  by: string,
): Promise<void> {
  if (!approval.instanceId) return;
  const at = approval.decidedAt ?? deps.clock.now();
  await deps.db
    .insert(actionBlocks)
    .values({
      agentId: approval.agentId,
      instanceId: approval.instanceId,
      kind: approval.kind,
      approvalId: approval.id,
      rejectedBy: by,
      note: approval.note,
      rejectedAt: at,
      until: at + deps.config.approvalRejectCooldownMs,
    })
    .onConflictDoNothing();
}

const active = (deps: Reader, agentId: string) =>
  and(eq(actionBlocks.agentId, agentId), isNull(actionBlocks.liftedAt), gt(actionBlocks.until, deps.clock.now()));

/** Who asks for which action on which instance, and in which run: what the block check reads. */
export type BlockedQuestion = Pick<ActionRequest, "agentId" | "instanceId" | "kind" | "decidedBy" | "runId">;

/**
 * The one rejection check: the active block that stops this decider asking for this action on
 * this instance in this run, or undefined when it may ask. Only the LLM in a run that consumed a
 * human message naming this instance and this action is let through (a human asked for it
 * again); the rules policy never is, and
 * neither is a filing with no run behind it. The action table (fleet/actions/decide.ts) refuses
 * what this holds for, and the rules policy does not try it (so it pages nobody about a refusal it caused).
 */
export async function blockingRejection(deps: Reader, asked: BlockedQuestion): Promise<ActionBlock | undefined> {
  const block = await activeBlock(deps, asked.agentId, asked.instanceId, asked.kind);
  if (!block) return undefined;
  return (await blockHolds(deps, asked)) ? block : undefined;
}

async function activeBlock(deps: Reader, agentId: string, instanceId: string, kind: string): Promise<ActionBlock | undefined> {
  const [row] = await activeBlockQuery(deps, agentId, instanceId, kind);
  return row;
}

/** The active block on this kind for this instance, as a statement (the action facts read it in their batch). */
export function activeBlockQuery(deps: Reader, agentId: string, instanceId: string, kind: string) {
  return deps.db
    .select()
    .from(actionBlocks)
    .where(and(active(deps, agentId), eq(actionBlocks.instanceId, instanceId), eq(actionBlocks.kind, kind)))
    .orderBy(desc(actionBlocks.until))
    .limit(1);
}

/** Whether an active block stops this question: only the LLM answering a human who asked again passes. */
export async function blockHolds(deps: Reader, asked: BlockedQuestion): Promise<boolean> {
  return !(asked.decidedBy === "llm" && (await humanAskedAgain(deps, asked)));
}

export async function listBlocks(deps: Reader, agentId: string, activeOnly: boolean, limit = 100): Promise<ActionBlock[]> {
  return blocksQuery(deps, agentId, activeOnly, limit);
}

/** listBlocks' read as a statement, for a caller that reads it in its own batch (the prompt's). */
export function blocksQuery(deps: Reader, agentId: string, activeOnly: boolean, limit = 100) {
  return deps.db
    .select()
    .from(actionBlocks)
    .where(activeOnly ? active(deps, agentId) : eq(actionBlocks.agentId, agentId))
    .orderBy(desc(actionBlocks.id))
    .limit(limit);
}

/** Lifts every active block on this action for this instance (a human approved it after all). */
export async function liftBlocksFor(deps: Reader, agentId: string, instanceId: string, kind: string, by: string): Promise<void> {
  await deps.db
    .update(actionBlocks)
    .set({ liftedAt: deps.clock.now(), liftedBy: by })
    .where(and(active(deps, agentId), eq(actionBlocks.instanceId, instanceId), eq(actionBlocks.kind, kind)));
}

/** Lifts one block; undefined when there is no such block. Lifting an inactive one changes nothing. */
export async function liftBlock(deps: Reader, agentId: string, blockId: number, by: string): Promise<ActionBlock | undefined> {
  const mine = and(eq(actionBlocks.agentId, agentId), eq(actionBlocks.id, blockId));
  await deps.db
    .update(actionBlocks)
    .set({ liftedAt: deps.clock.now(), liftedBy: by })
    .where(and(mine, isNull(actionBlocks.liftedAt), gt(actionBlocks.until, deps.clock.now())));
  const [row] = await deps.db.select().from(actionBlocks).where(mine);
  return row;
}

/** Whether the run filing a request consumed a human message naming this instance and action. */
async function humanAskedAgain(deps: Reader, asked: BlockedQuestion): Promise<boolean> {
  if (asked.runId === null) return false;
  const rows = await deps.db
    .select({ payload: events.payload })
    .from(events)
    .where(and(eq(events.agentId, asked.agentId), eq(events.runId, asked.runId), eq(events.source, "human")));
  return rows.some((row) => asksFor(humanText(row.payload), asked.instanceId, asked.kind));
}

/** The sentence the model, the rules policy and the audit see. */
export function describeBlock(block: ActionBlock): string {
  const note = block.note ? ` ("${block.note}")` : "";
  return `${block.kind} ${block.instanceId} was rejected by ${block.rejectedBy} at ${iso(block.rejectedAt)}${note}; it is blocked until ${iso(block.until)} unless a human asks for it again (a message naming ${block.instanceId} and ${block.kind})`;
}

export function presentBlock(block: ActionBlock, now: number) {
  return {
    id: block.id,
    instanceId: block.instanceId,
    kind: block.kind,
    approvalId: block.approvalId,
    rejectedBy: block.rejectedBy,
    note: block.note,
    rejectedAt: iso(block.rejectedAt),
    until: iso(block.until),
    active: block.liftedAt === null && block.until > now,
    liftedAt: block.liftedAt === null ? null : iso(block.liftedAt),
    liftedBy: block.liftedBy,
  };
}
