/**
 * An ingest as part of a caller's batch (the cron tick's write batch): the ingest's statements
 * (pipeline/ingest.ts), any statements of the caller's that key off the event's dedup key, and,
 * once committed, the publish of the run slot the ingest moved.
 */
import type { PipelineDeps } from "./deps.ts";
import { namedBatch } from "../db/named-batch.ts";
import { ingestStatements, publishAfterIngest, type IncomingEvent, type MovedRun } from "./ingest.ts";
import type { TickStatement, TickWrites } from "./tick-plan.ts";

export function ingestWrites(deps: PipelineDeps, input: IncomingEvent, also: readonly TickStatement[] = []): TickWrites<void> {
  const ingest = namedBatch(ingestStatements(deps, input));
  return {
    statements: [...ingest.items, ...also],
    async after(results) {
      const moved: MovedRun | undefined = ingest.results(results).scheduleRun[0];
      await publishAfterIngest(deps, input.agentId, moved);
    },
  };
}
