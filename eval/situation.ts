/**
 * What an eval situation is: a small simulated fleet, what happens to it (failures, reports,
 * chat, the provider's side changing, approvals decided, time passing), and the decisions a good
 * agent makes and must not make. A decision is an action the agent took or asked for (start,
 * stop, reboot, destroy, replace) or a notification it sent, about one instance. A match may narrow it to
 * approval requests (or to actions taken without one), to notifications whose title says
 * something, and, to forbid a repeat, allow the first few.
 */
import type { FailureKind } from "../fleet/providers/simulated-failures.ts";
import type { InstanceState } from "../fleet/providers/provider.ts";

export type DecisionKind = "start" | "stop" | "reboot" | "destroy" | "replace" | "notify";
export const DECISION_KINDS: readonly DecisionKind[] = ["start", "stop", "reboot", "destroy", "replace", "notify"];

/** Any of `kinds` about `instance` ("*": any instance). */
export interface DecisionMatch {
  kinds: readonly DecisionKind[];
  instance: string;
  /** true: only actions filed as approval requests; false: only ones taken without asking. */
  asked?: boolean;
  /** Only notifications whose title contains this. */
  about?: string;
  /** Forbid only: the first `allowed` matching decisions are fine (1: a second one is wrong). */
  allowed?: number;
}

export type Step =
  /** A scripted simulator failure, reported at once as the instance's webhook would. */
  | { fail: string; kind: FailureKind }
  /** A signed instance webhook; `agoS` dates the report that far in the past; `progress` and `gpuUtil` as the reporter sends them. */
  | { report: string; state: InstanceState; message?: string; agoS?: number; progress?: number; gpuUtil?: number }
  /** The provider's side of an instance changes (reconciliation finds it on the next tick). */
  | { provider: string; set: { state?: InstanceState; statusMessage?: string | null; label?: string; failure?: FailureKind | null } }
  /** An operator's chat message. */
  | { say: string }
  /** Time passes, in seconds: a cron tick every minute, and what falls due is delivered. */
  | { wait: number }
  /** An operator decides every pending approval. */
  | { decide: "approve" | "reject"; note?: string }
  /** An earlier decision by the rules policy (setup only: it files what needs approval). */
  | { file: "start" | "destroy"; instance: string };

export interface Situation {
  name: string;
  /** Simulated instances sim-1 … sim-N (default 2). */
  instances?: number;
  /** Settings for this situation (e.g. APPROVAL_REQUIRED_ACTIONS). */
  vars?: Record<string, string>;
  /** What happened before: not scored. */
  setup?: readonly Step[];
  /** What happens, scored from its first step. */
  steps: readonly Step[];
  expect: readonly DecisionMatch[];
  forbid: readonly DecisionMatch[];
}

export const restart = (instance: string): DecisionMatch => ({ kinds: ["start", "reboot"], instance });
export const any =
  (...kinds: DecisionKind[]) =>
  (instance: string): DecisionMatch => ({ kinds, instance });
export const notify = any("notify");
export const destroy = any("destroy");
export const stop = any("stop");
/** The action filed as an approval request, not taken. */
export const asked =
  (kind: DecisionKind) =>
  (instance: string): DecisionMatch => ({ kinds: [kind], instance, asked: true });
/** The action taken without asking a human. */
export const direct =
  (kind: DecisionKind) =>
  (instance: string): DecisionMatch => ({ kinds: [kind], instance, asked: false });
/** A notification about `instance` whose title contains `about`. */
export const told = (instance: string, about: string): DecisionMatch => ({ kinds: ["notify"], instance, about });
/** Forbids a repeat: `m` more than once. */
export const again = (m: DecisionMatch): DecisionMatch => ({ ...m, allowed: 1 });
/** Nothing at all may be done about any instance. */
export const NOTHING: readonly DecisionMatch[] = [{ kinds: DECISION_KINDS, instance: "*" }];
