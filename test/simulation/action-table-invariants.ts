/**
 * The trust invariants of the action table, checked by the action-table simulation on every
 * request it makes. Each request is observed from outside the table: what the simulation knew
 * before asking (the mode, today's spend against the limit, the rejections its own human made,
 * what the run's input concerned) and what reached the provider or was filed while it was asked.
 * Nothing here reads how the table decided, so the checks hold whatever its internals become.
 */

/** Who asked: the LLM through its tool (agent/tools), a rule through executeAction, or an operator. */
export type Asker = "llm" | "rules" | "human";

export interface ObservedRequest {
  asker: Asker;
  kind: string;
  instanceId: string;
  /** AGENT_MODE=shadow. */
  shadow: boolean;
  /** Today's spend was at or over SPEND_LIMIT_PER_DAY_USD when it was asked. */
  overSpendLimit: boolean;
  /** The instance's state in fleetwarden's view when it was asked (null: not known). */
  stateBefore: string | null;
  /** A rejection by the simulated human of this kind on this instance, still inside its cooldown and not lifted by an approval. */
  rejectedUntil: number | null;
  /** The run consumed a human message asking for this kind on this instance. */
  humanAskedAgain: boolean;
  /** The LLM asked about an instance nothing in its run's input concerns (no event, message or attention marker). */
  unconcerned: boolean;
  /** Provider calls made while it was asked. */
  providerCalls: readonly string[];
  /** Approvals filed for this kind on this instance while it was asked. */
  filedApprovals: number;
  status: string;
  at: number;
}

/** Kinds that add spend (the daily limit asks a human about them). */
const SPENDING = new Set(["start", "replace"]);
/** States that bill nothing but storage: a reboot from them starts billing again (issue #33 item 6). */
const NOT_BILLING = new Set(["stopped", "exited"]);

/** The request can start billing: a spending kind, or a reboot of an instance that is not running. */
export const addsSpend = (r: Pick<ObservedRequest, "kind" | "stateBefore">) =>
  SPENDING.has(r.kind) || (r.kind === "reboot" && r.stateBefore !== null && NOT_BILLING.has(r.stateBefore));

export function checkRequest(r: ObservedRequest): string[] {
  const what = `${r.asker} ${r.kind} ${r.instanceId} at ${r.at} (${r.status}, provider: ${r.providerCalls.join("; ") || "none"})`;
  const acted = r.providerCalls.length > 0;
  if (r.asker === "human") return [];
  const violations: string[] = [];
  if (r.shadow && acted) violations.push(`shadow mode: ${what} reached the provider without a human`);
  if (r.shadow && r.filedApprovals > 0) violations.push(`shadow mode: ${what} filed an approval (shadow only proposes)`);
  if (r.overSpendLimit && addsSpend(r) && acted) violations.push(`spend limit: ${what} added spend over the daily limit without a human`);
  const blocked = r.rejectedUntil !== null && !(r.asker === "llm" && r.humanAskedAgain);
  if (blocked && acted) violations.push(`rejection: ${what} acted inside the cooldown of a human's rejection (until ${r.rejectedUntil})`);
  if (blocked && r.filedApprovals > 0)
    violations.push(`rejection: ${what} asked a human again inside the cooldown of their rejection (until ${r.rejectedUntil})`);
  if (r.unconcerned && acted) violations.push(`blast radius: ${what} acted on an instance nothing in the run concerns, without a human`);
  return violations;
}
