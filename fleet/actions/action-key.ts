/**
 * The idempotency key of an action a run decides: what the action answers, never which run or
 * tool call decided it. A run that dies after acting hands its events back; the run that
 * re-claims them and decides the same thing (the same kind on the same instance, answering the
 * same events) finds the recorded action instead of acting again (invariant 8). The rules policy
 * and the LLM tools share the key, so a re-claim decided by the other one does not act twice.
 */
import type { ConsumedEvent, ConsumedWake } from "../../pipeline/index.ts";

/** What a run answers: the events (and wakes) it consumed. */
export interface Answering {
  events: readonly Pick<ConsumedEvent, "id" | "payload">[];
  wakes: readonly Pick<ConsumedWake, "id">[];
}

/**
 * agent + instance + kind + the ids of the events being answered: those about this instance
 * when there are any, otherwise everything the run consumed (e.g. a chat message asking for it).
 */
export function answeringActionKey(agentId: string, instanceId: string, kind: string, answering: Answering): string {
  const about = answering.events.filter((e) => (e.payload as { instanceId?: unknown } | null)?.instanceId === instanceId);
  const events = (about.length > 0 ? about : answering.events).map((e) => e.id).sort((a, b) => a - b);
  const wakes = about.length > 0 ? [] : answering.wakes.map((w) => w.id).sort((a, b) => a - b);
  return `agent:${agentId}:${kind}:${instanceId}:events:${events.join(",")}${wakes.length ? `:wakes:${wakes.join(",")}` : ""}`;
}
