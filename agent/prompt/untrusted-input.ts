/**
 * Which runs have read text no operator typed, for the `untrusted` mark on the facts they write
 * (agent/memory.ts). Two sources make a run's input untrusted:
 * - what woke it: any consumed event other than a person's (`human` chat, `manual` trigger,
 *   `approval` decision), or any consumed wake (its reason is text a model wrote). Read from the
 *   database in the remember statement itself (UNTRUSTED_SOURCES below).
 * - what it read: a tool returning the provider's text (labels, status messages, container logs)
 *   earlier in the same run. Kept here, per run fence (the object lives exactly as long as the
 *   run's step), marked by the tool runner (agent/tools/index.ts).
 */
import type { RunFence } from "../../pipeline/index.ts";

/** Event sources a person wrote; any other consumed event makes the run's input untrusted. */
export const OPERATOR_SOURCES = ["human", "manual", "approval"] as const;

/** Tools whose output carries the provider's free text. */
export const PROVIDER_TEXT_TOOLS: ReadonlySet<string> = new Set(["list_instances", "get_instance", "get_instance_logs"]);

const readProviderText = new WeakSet<RunFence>();

/** Marks the run (by its fence) as having read provider text; a call outside a run marks nothing. */
export function markProviderTextRead(fence: RunFence | null | undefined): void {
  if (fence) readProviderText.add(fence);
}

export function hasReadProviderText(fence: RunFence | null): boolean {
  return fence !== null && readProviderText.has(fence);
}
