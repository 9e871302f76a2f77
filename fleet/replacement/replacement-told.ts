/**
 * A replacement told at each real stage (issue #33, item 1), only once the stage's effect is
 * there: rented (the provider answered the create with an id, or the marker found it), running
 * (the new instance reported running), done (the old one destroyed). Approval is told where it
 * happens (fleet/actions/approval-told.ts for a human, fleet/actions/money-told.ts for the rules
 * or the model); failure by fleet/replacement/replacement.ts `tellFailed`.
 *
 * Bound: the once-mark `replacement-<stage>:<replacementId>:<oldInstanceId>` (fleet/tell-once.ts),
 * written with the notice in one batch, so each stage of each replacement is told once, whichever
 * stepper (an overlapping tick, a retry) reaches it.
 */
import type { NotifyDeps } from "../../notify/notify-human.ts";
import type { Offer } from "../providers/provider.ts";
import { onceKey } from "../once-notices.ts";
import { tellOnce } from "../tell-once.ts";
import type { Basis, ReplacementRow } from "./replacement-rows.ts";

export type ReplacementStage = "rented" | "running" | "done";

export function stageKey(row: Pick<ReplacementRow, "id" | "oldInstanceId">, stage: ReplacementStage): string {
  return onceKey(`replacement-${stage}`, String(row.id), row.oldInstanceId);
}

const usd = (n: number | null | undefined) => (n === null || n === undefined ? "an unknown price" : `$${n.toFixed(2)}/h`);

/** "rented sim-on-4 on offer o-17 at $0.46/h (sim-1 cost $0.42/h: +$0.04/h)" */
export function rentedWords(row: ReplacementRow, newId: string, offer: Offer | null): string {
  const old = (row.basis as Basis | null)?.pricePerHour ?? null;
  const price = offer?.pricePerHour ?? null;
  const diff = old !== null && price !== null ? `: ${price >= old ? "+" : "-"}$${Math.abs(price - old).toFixed(2)}/h` : "";
  return `rented ${newId} on offer ${offer?.id ?? "?"} at ${usd(price)} (${row.oldInstanceId} cost ${usd(old)}${diff})`;
}

/** Tells one stage once; a failure to tell is logged, never raised (the step's effect stands). */
export async function tellStage(
  deps: NotifyDeps,
  row: ReplacementRow,
  stage: ReplacementStage,
  detail: { newId: string; offer?: Offer | null },
): Promise<void> {
  const { newId } = detail;
  const words: Record<ReplacementStage, { title: string; body: string }> = {
    rented: {
      title: `Replacement of ${row.oldInstanceId}: ${rentedWords(row, newId, detail.offer ?? null)}`,
      body: `Replacement ${row.id} ${rentedWords(row, newId, detail.offer ?? null)}. It is billed from now; ${row.oldInstanceId} is destroyed only once ${newId} runs.`,
    },
    running: {
      title: `Replacement of ${row.oldInstanceId}: ${newId} is running`,
      body: `Replacement ${row.id}: ${newId} reported running; ${row.oldInstanceId} is being destroyed now.`,
    },
    done: {
      title: `Replaced ${row.oldInstanceId} by ${newId}: the old instance is destroyed`,
      body: `Replacement ${row.id} is done: ${newId} runs in place of ${row.oldInstanceId}, which was destroyed and is no longer billed.`,
    },
  };
  try {
    await tellOnce(deps, row.agentId, {
      key: stageKey(row, stage),
      ...words[stage],
      severity: "info",
      instanceId: stage === "done" ? newId : row.oldInstanceId,
    });
  } catch (err) {
    deps.log.error("replacement stage not told", { agentId: row.agentId, replacementId: row.id, stage, error: String(err) });
  }
}
