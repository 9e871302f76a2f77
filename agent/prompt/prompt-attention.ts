/**
 * The parts of the prompt that keep the agent out of loops: active rejections (a human said no:
 * do not ask again; a `<rejections>` data block, since the note is text the model must not obey),
 * instances stuck past LOADING_TIMEOUT_S (they need attention), and, for each
 * re-check this run consumes, what it was about, what it was waiting for and what it finds.
 * Read fresh from the database with the fleet snapshot.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import type { RunContext } from "../../pipeline/index.ts";
import { instances, wakes } from "../../schema/index.ts";
import { listBlocks, type ActionBlock } from "../../fleet/actions/action-blocks.ts";
import { dataBlock } from "./prompt-data.ts";
import { LOADING_STATES, loadingTimeoutFor } from "../../fleet/instances/overdue-states.ts";

type InstanceRow = typeof instances.$inferSelect;
type WakeRow = typeof wakes.$inferSelect;

const iso = (ms: number) => new Date(ms).toISOString();

/** Active rejections as a `<rejections>` block (the note and who rejected are data), or "" when none. */
export async function renderRejections(deps: Pick<AgentDeps, "db" | "clock">, agentId: string): Promise<string> {
  return rejectionsText(await listBlocks(deps, agentId, true, REJECTIONS_SHOWN));
}

/** The active rejections the prompt shows at most. */
export const REJECTIONS_SHOWN = 20;

/** renderRejections from blocks already read. */
export function rejectionsText(blocks: readonly ActionBlock[]): string {
  if (blocks.length === 0) return "";
  const values = blocks.map((b) => ({
    kind: b.kind,
    instanceId: b.instanceId,
    rejectedBy: b.rejectedBy,
    rejectedAt: iso(b.rejectedAt),
    ...(b.note ? { note: b.note } : {}),
    blockedUntil: iso(b.until),
  }));
  return `Rejected by a human (do not request these again unless a human asks for them):\n${dataBlock("rejections", values)}`;
}

/** A marker for the snapshot entry of an instance stuck loading past the timeout ("" when not). */
export function attentionMarker(row: InstanceRow, now: number, loadingTimeoutMs: number): string {
  const timeoutMs = loadingTimeoutFor(loadingTimeoutMs, row.pricePerHour);
  if (!(LOADING_STATES as readonly string[]).includes(row.state) || now - row.stateAt <= timeoutMs) return "";
  return `NEEDS ATTENTION: ${row.state} for ${Math.round((now - row.stateAt) / 1000)}s, past LOADING_TIMEOUT_S`;
}

/** What each consumed re-check was about and what it finds now, by wake id. */
export async function describeRechecks(
  deps: Pick<AgentDeps, "db">,
  context: Pick<RunContext<AgentDeps>, "agentId" | "wakes">,
): Promise<Map<number, string>> {
  const described = new Map<number, string>();
  if (context.wakes.length === 0) return described;
  const rows = await deps.db
    .select()
    .from(wakes)
    .where(
      and(
        eq(wakes.agentId, context.agentId),
        inArray(
          wakes.id,
          context.wakes.map((w) => w.id),
        ),
      ),
    );
  const about = rows.filter((w) => w.instanceId !== null);
  if (about.length === 0) return described;
  const fleet = await deps.db
    .select()
    .from(instances)
    .where(
      and(
        eq(instances.agentId, context.agentId),
        inArray(
          instances.id,
          about.map((w) => w.instanceId!),
        ),
      ),
    );
  return rechecksText(about, fleet);
}

/** describeRechecks from the consumed wakes' rows and their instances' rows, already read. */
export function rechecksText(wakeRows: readonly WakeRow[], fleet: readonly InstanceRow[]): Map<number, string> {
  const described = new Map<number, string>();
  for (const wake of wakeRows.filter((w) => w.instanceId !== null)) {
    const row = fleet.find((i) => i.id === wake.instanceId);
    const by =
      wake.createdByRun !== null
        ? `scheduled by run ${wake.createdByRun} at ${iso(wake.createdAt)}`
        : `scheduled at ${iso(wake.createdAt)}`;
    const waiting = wake.awaitState ? `, waiting for ${wake.instanceId} to be ${wake.awaitState}` : `, about ${wake.instanceId}`;
    const now = row ? `; it is ${row.state} since ${iso(row.stateAt)}` : "; it is no longer known";
    const verdict = row && wake.awaitState && row.state !== wake.awaitState ? " — NOT as expected: act or tell a human" : "";
    described.set(wake.id, `(${by}${waiting}${now}${verdict})`);
  }
  return described;
}
