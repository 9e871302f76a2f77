/**
 * The one decision table for actions: whether a requested action (from the LLM's tools, the rules
 * policy, an economics rule, a replacement step, an operator or an approval being carried out)
 * happens without a human. One ordered list of gates, read by one pure function over the facts
 * fleet/actions/action-facts.ts gathers; the first gate whose `when` holds gives the outcome, and
 * executeAction carries it out (fleet/actions/carry-out.ts). A new rule is a row here.
 *
 * The run and hour bounds and the per-instance rate limit are not rows: they are decided in the
 * statement that records the action (or files the approval), so concurrent callers cannot slip
 * under them (fleet/actions/bounds.ts, action-records.ts). docs/actions.md is rendered from these
 * rows (`renderGateTable`, written by docs/generate.ts).
 */
import type { ActionKind, ActionRequest } from "./action-types.ts";
import { REMEDIATION_KINDS } from "./fleet-breaker.ts";

/** What may happen to a requested action. */
export type Outcome = "unsupported" | "recorded" | "wait" | "blocked" | "refused" | "proposed" | "approval" | "act";

/**
 * Kinds that always add spend (a create is a replacement's rental, asked as `replace`). A reboot adds
 * spend when the instance is not running (stopped or exited): gatherFacts decides that from the
 * instances table, and the table reads the one fact `addsSpend`.
 */
export const SPENDING_KINDS: ReadonlySet<ActionKind> = new Set(["start", "replace", "rent"]);

/** At most this many rentals per owner per agent in any hour (issue #35; refused past it). */
export const OWNER_RENTALS_PER_HOUR = 5;
/** States from which a reboot starts billing again. */
export const NOT_BILLING_STATES: ReadonlySet<string> = new Set(["stopped", "exited"]);

/** Everything the gates read, gathered before deciding (no gate reads anything else). */
export interface ActionFacts {
  kind: ActionKind;
  decidedBy: ActionRequest["decidedBy"];
  /** A human's approval being carried out (the request names its approval). */
  approvedByHuman: boolean;
  /** An operator asking on their own (the dashboard or the API), not an approval carried out. */
  operatorAsks: boolean;
  shadow: boolean;
  /** The provider lacks the capability the kind needs. */
  providerCannot: boolean;
  /** An action is already recorded under the request's idempotency key. */
  recorded: boolean;
  /** An approval for the same kind on the same instance is pending. */
  pendingApproval: boolean;
  /** An active rejection of this kind on this instance that a human asking again did not lift. */
  rejected: boolean;
  /** APPROVAL_REQUIRED_ACTIONS names the kind. */
  approvalListed: boolean;
  /** APPROVAL_TWO_PERSON names the kind. */
  twoPerson: boolean;
  /** Today's spend is at or over SPEND_LIMIT_PER_DAY_USD (false when there is no limit). */
  overSpendLimit: boolean;
  /** The request can start billing: a spending kind, or a reboot of an instance that is not running. */
  addsSpend: boolean;
  /** The fleet breaker holds remediation (fleet/actions/fleet-breaker.ts): too many instances dead at once, not lifted. */
  fleetBreakerOpen: boolean;
  /** Why the caller wants a human (nothing in the run's input concerns the instance: blast radius; a rule that only proposes). */
  callerAsks: string | null;
  /**
   * A rental past its owner's daily budget (OWNER_SPEND_LIMIT_PER_DAY_USD): the refusal with its
   * figures, or null (not a rental, no budget, or within it). fleet/leases/owner-budget.ts.
   */
  ownerOverBudget?: string | null;
  /** The owner's rentals on this agent in the last hour (kind rent, not refused); 0 when not a rental. */
  ownerRentalsLastHour?: number;
}

/** Why a human must decide, one reason per rule that says so; empty when none does. */
export function humanNeeded(f: ActionFacts): string[] {
  if (f.approvedByHuman) return [];
  if (f.decidedBy === "human") {
    if (!f.operatorAsks) return [];
    return [...(f.approvalListed ? ["approval list"] : []), ...(f.twoPerson ? ["two-person"] : [])];
  }
  return [
    ...(f.approvalListed ? ["approval list"] : []),
    ...(f.overSpendLimit && f.addsSpend ? ["spend limit"] : []),
    ...(breakerHolds(f) ? ["fleet breaker"] : []),
    ...(f.callerAsks !== null ? ["caller asks"] : []),
  ];
}

/** The breaker holds what a rule or a model decides to restart, replace or destroy. */
const breakerHolds = (f: ActionFacts) => f.fleetBreakerOpen && f.decidedBy !== "human" && REMEDIATION_KINDS.has(f.kind);

/**
 * Who a pending approval and a rejection answer: a decision made without a human, and an
 * operator's own request that needs a human. An approval being carried out, and a human acting
 * where nothing asks for one, go on.
 */
const asks = (f: ActionFacts) => f.decidedBy !== "human" || humanNeeded(f).length > 0;

export interface Gate {
  name: string;
  when: (f: ActionFacts) => boolean;
  outcome: Outcome;
  /** One line for docs/actions.md. */
  doc: string;
}

export const GATES: readonly Gate[] = [
  {
    name: "provider cannot",
    when: (f) => f.providerCannot,
    outcome: "unsupported",
    doc: "The provider lacks the kind's capability: recorded `failed` with a 501, nobody asked to approve what cannot happen.",
  },
  {
    name: "already recorded",
    when: (f) => f.recorded,
    outcome: "recorded",
    doc: "The idempotency key is used: the recorded answer, nothing done again.",
  },
  {
    name: "approval pending",
    when: (f) => f.pendingApproval && asks(f),
    outcome: "wait",
    doc: "An approval for the same action on the same instance is pending: that one is the answer, nothing filed, nobody paged again.",
  },
  {
    name: "rejected by a human",
    when: (f) => f.rejected && asks(f),
    outcome: "blocked",
    doc: "A human rejected this action on this instance within APPROVAL_REJECT_COOLDOWN_S: recorded `blocked`, unless the run answers a human message asking for it again.",
  },
  {
    name: "owner budget",
    when: (f) => f.kind === "rent" && !f.approvedByHuman && (f.ownerOverBudget ?? null) !== null,
    outcome: "refused",
    doc: "A rental whose owner's leases on the agent cost today (each instance's $/h × the hours of today it is leased for, through its lease end) plus the new rental's max $/h × its lease hours left today pass OWNER_SPEND_LIMIT_PER_DAY_USD: recorded `refused` with the figures, nothing rented, nobody asked (issue #35: the budget refuses).",
  },
  {
    name: "owner rentals per hour",
    when: (f) => f.kind === "rent" && !f.approvedByHuman && (f.ownerRentalsLastHour ?? 0) >= OWNER_RENTALS_PER_HOUR,
    outcome: "refused",
    doc: `An owner's ${OWNER_RENTALS_PER_HOUR + 1}th rental on the agent within an hour (refused ones not counted): recorded \`refused\`, nothing rented (a coding agent in a loop cannot rent a fleet).`,
  },
  {
    name: "shadow mode",
    when: (f) => f.shadow && f.decidedBy !== "human",
    outcome: "proposed",
    doc: "AGENT_MODE=shadow and no human decided: recorded `proposed`, no provider call, no approval filed. A human's own action behaves as in acting mode.",
  },
  {
    name: "fleet breaker open",
    when: breakerHolds,
    outcome: "approval",
    doc: "More than MAX_UNHEALTHY_PCT of the agent's instances are offline, unknown or gone (each confirmed by two observations 60 s apart): the provider is the likely fault, so a start, reboot, replace or destroy decided by the rules or the LLM becomes an approval instead of acting (bounded by APPROVALS_PER_RUN/HOUR; the watchdog tells a human once). A human's own action goes; it ends when the share falls back or a human lifts the hold.",
  },
  {
    name: "needs a human",
    when: (f) => humanNeeded(f).length > 0,
    outcome: "approval",
    doc: "APPROVAL_REQUIRED_ACTIONS (and APPROVAL_TWO_PERSON for an operator's own request), SPEND_LIMIT_PER_DAY_USD reached for a request that adds spend (start, replace, a reboot of a stopped or exited instance), or the caller asks a human (blast radius: an instance nothing in the run's input concerns; a rule that only proposes): an approval is filed and a human paged.",
  },
  {
    name: "act",
    when: () => true,
    outcome: "act",
    doc: "Everything else: the provider is called (a `replace` marks its replacement approved; the tick's replacement check takes its steps).",
  },
];

export interface Decision {
  gate: string;
  outcome: Outcome;
  /** Why a human is needed (also for a shadow proposal that would have asked one). */
  humanNeeded: string[];
}

/** The first gate that holds decides. */
export function decideAction(facts: ActionFacts, gates: readonly Gate[] = GATES): Decision {
  const gate = gates.find((g) => g.when(facts)) ?? GATES[GATES.length - 1]!;
  return { gate: gate.name, outcome: gate.outcome, humanNeeded: humanNeeded(facts) };
}

/** The gates as a markdown table, for docs/actions.md. */
export function renderGateTable(gates: readonly Gate[] = GATES): string {
  const rows = gates.map((g, i) => `| ${i + 1} | ${g.name} | \`${g.outcome}\` | ${g.doc.replaceAll("|", "\\|")} |`);
  return [
    "# Actions: the decision table",
    "",
    "<!-- Generated by `npm run docs` from fleet/actions/decide.ts; do not edit by hand. -->",
    "",
    "Every requested action (the LLM's tools, the rules policy, the economics check, a replacement step, an operator, an approval or a Slack click) goes through `executeAction`, which gathers the facts below and takes the outcome of the first gate that holds.",
    "",
    "| # | gate | outcome | when |",
    "|---|------|---------|------|",
    ...rows,
    "",
    "Bounds, decided in the recording statement (so concurrent callers cannot slip under them): LLM_ACTIONS_PER_RUN and ACTIONS_PER_HOUR (`refused`), the per-instance ACTION_RATE_LIMIT_PER_HOUR (`rate_limited`), APPROVALS_PER_RUN and APPROVALS_PER_HOUR (`refused`, nothing filed). A human's own decision is exempt from the action bounds.",
    "",
  ].join("\n");
}
