/**
 * The shape of an action on an instance: its kinds, the request (who decided, what it answers,
 * the deciding run's fence) and the result. Its own module because executing, recording,
 * approving and expecting an action all speak it, and none of them should import another to do so.
 */
import type { RunFence } from "../../pipeline/index.ts";

export const ACTION_KINDS = ["start", "stop", "reboot", "destroy", "label", "replace", "rent"] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

export interface ActionRequest {
  agentId: string;
  runId: number | null;
  instanceId: string;
  kind: ActionKind;
  /** The new label, for kind `label`. */
  label?: string;
  decidedBy: "llm" | "rules" | "human";
  /** Same key (per agent) = same action: a repeat does not call the provider again. */
  idempotencyKey: string;
  reason?: string;
  approvalId?: number;
  /** The deciding run's fence; absent or null when no run decided (a human's approval). */
  fence?: RunFence | null;
  /** What justified it (stored on the action record and shown with it). */
  evidence?: ActionEvidence;
  /** The model that decided it, when decidedBy is llm. */
  model?: string;
  /**
   * The operator whose own action it is, when decidedBy is human and no approval is being carried
   * out (jobs/operator-instance-action.ts writes it on the record): the approval list applies to it.
   */
  operator?: string;
  /**
   * Acts through the whole provider account, not the agent's instance filter: an orphan no agent's
   * filter claims (fleet/leases/orphans.ts), which the agent's scoped provider would refuse. Set
   * only by the orphan sweep and by carrying out its approval (marked `account: true` on the
   * requested action's result), never from a tool's or a request's input.
   */
  account?: true;
  /**
   * Why the caller wants a human to decide, in words for the approver: nothing in the run's input
   * concerns the instance (blast radius, agent/tools/instance-actions.ts), or a rule that only
   * ever proposes (the economics check's destroy of a long-stopped instance).
   */
  askHuman?: string;
  /** What to rent, for kind `rent` (its instanceId is a placeholder `rent:<key>` until the provider answers). */
  rent?: RentSpec;
}

/** A rental on a lease (issue #35): what to rent, who for, and until when. */
export interface RentSpec {
  gpuName: string;
  gpuCount: number;
  /** The most the caller pays per hour for the instance. */
  maxPricePerHour: number;
  image: string;
  diskGb: number | null;
  leaseSeconds: number;
  purpose: string;
  /** The operator the lease belongs to (operators.name). */
  owner: string;
  /** The MCP client acting for them (its clientInfo name), or "api". */
  client: string | null;
  /** The agent's instance-filter label prefix: the lease label starts with it, so the agent still sees the instance. */
  labelPrefix?: string;
}

/**
 * Why an action was taken: the run's consumed events and wakes that concern it, and the human
 * message that asked for it, if one did. A human's own action carries the operator instead.
 */
export interface ActionEvidence {
  eventIds: number[];
  wakeIds: number[];
  /** The human message (event id and its text, cut) that asked for it. */
  humanMessage?: { eventId: number; text: string };
}

export interface ActionResult {
  actionId: number;
  /**
   * proposed: shadow mode recorded it and did not act; refused: a run or hour bound
   * (fleet/actions/bounds.ts) said no before anything was called.
   */
  status: "succeeded" | "failed" | "awaiting_approval" | "rate_limited" | "proposed" | "refused";
  /** True when the key was already used and this is the recorded result. */
  repeated: boolean;
  approvalId?: number;
  error?: string;
  /** A rental's new instance, its price and its lease end (ms epoch). */
  instanceId?: string;
  pricePerHour?: number;
  leaseEndsAt?: number;
}
