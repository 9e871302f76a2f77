/**
 * No echo (invariant 10): what an action should bring an instance to, and how a later report is
 * judged against it. After a successful action the instance row holds the expected final state
 * and a deadline (LOADING_TIMEOUT_S from the action); a report on the way there (a reboot passes
 * through rebooting and loading) or of the state itself is recorded in the history but wakes
 * nobody (drop reason `expected`). A report of anything else, or the deadline passing unmet
 * (fleet/instances/overdue-states.ts), is an event as any other change.
 */
import type { ActionKind } from "../actions/action-types.ts";
import type { InstanceState } from "../providers/provider.ts";

/** The state each action should end in; null when an action implies no state to wait for. */
export const EXPECTED_AFTER: Record<ActionKind, InstanceState | null> = {
  start: "running",
  stop: "stopped",
  reboot: "running",
  destroy: null,
  label: null,
  // A replacement awaits its new instance's running itself (fleet/replacement*.ts).
  replace: null,
  // A rental's instance is new: the listing brings it in.
  rent: null,
};

/** States an instance passes through on its way to the expected one. */
export const ON_THE_WAY: Partial<Record<InstanceState, readonly InstanceState[]>> = {
  running: ["created", "loading", "rebooting"],
};

/** The columns a successful action sets on the instance (nothing for kinds with no expectation). */
export function expectationAfter(kind: ActionKind, now: number, timeoutMs: number): { expectedState?: string; expectedUntil?: number } {
  const expected = EXPECTED_AFTER[kind];
  return expected ? { expectedState: expected, expectedUntil: now + timeoutMs } : {};
}

/** Expected states that a report of `state` matches: the state itself, or one it is on the way to. */
export function expectationsMatchedBy(state: InstanceState): InstanceState[] {
  const finals = new Set<InstanceState>([state]);
  for (const [final, via] of Object.entries(ON_THE_WAY)) if (via?.includes(state)) finals.add(final as InstanceState);
  return [...finals];
}

/** Expected states that stay expected after a report of `state` (it is still on the way). */
export function expectationsKeptBy(state: InstanceState): InstanceState[] {
  return expectationsMatchedBy(state).filter((final) => final !== state);
}
