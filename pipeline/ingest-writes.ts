/**
 * An ingest as part of a caller's batch (the cron tick's write batch): the ingest's statements
 * (pipeline/ingest.ts), any statements of the caller's that key off the event's dedup key, and,
 * once committed, the publish of the run slot the ingest moved.
 */
import type { PipelineDeps } from "./deps.ts";
import { ingestStatements, publishAfterIngest, type IncomingEvent } from "./ingest.ts";
import type { TickStatement, TickWrites } from "./tick-plan.ts";

export function ingestWrites(deps: PipelineDeps, input: IncomingEvent, also: readonly TickStatement[] = []): TickWrites<void> {
  return {
    statements: [...ingestStatements(deps, input), ...also],
    async after(results) {
      const moved = (results[2] as { slot: number; runAt: number | null }[] | undefined)?.[0];
      await publishAfterIngest(deps, input.agentId, moved);
    },
  };
}
