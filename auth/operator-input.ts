/**
 * An operator's chat message or manual trigger entering the inbox, the one way both the API and
 * the dashboard ingest them: a priority-0 event naming its operator (`payload.operator`, and for a message `operatorId`),
 * idempotent on the caller's key, with its activity row (activity.ts) in the event's own ingest
 * batch. So the row is written exactly when the event is stored, in the same transaction, and a
 * repeated key writes neither; no extra round trip (docs/architecture.md, "Round trips").
 */
import { ingestEvent, type Ingested, type PipelineDeps } from "../pipeline/index.ts";
import { activityOfIngest } from "./activity.ts";
import type { Principal } from "./roles.ts";

export type OperatorInput =
  | { action: "message"; agentId: string; key: string; text: string }
  | { action: "trigger"; agentId: string; key: string; reason: string };

/**
 * Ingests `input` as said by `who`. The event's dedup key is `message:<key>` or `trigger:<key>`:
 * the same key twice is one event, answered `duplicate` the second time, with one activity row.
 */
export function ingestOperatorInput(deps: PipelineDeps, who: Principal, input: OperatorInput): Promise<Ingested> {
  const { action, agentId, key } = input;
  const event =
    input.action === "message"
      ? { source: "human" as const, payload: { text: input.text, operator: who.name, operatorId: who.operatorId } }
      : { source: "manual" as const, payload: { reason: input.reason, operator: who.name } };
  return ingestEvent(
    deps,
    { agentId, source: event.source, priority: 0, dedupKey: `${action}:${key}`, payload: event.payload },
    activityOfIngest(deps.db, who, { action, agentId, at: deps.clock.now() }),
  );
}
