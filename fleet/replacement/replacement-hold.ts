/**
 * Shadow mode holds a replacement in flight (issue #33 item 6): the pause button is the human's
 * kill switch, so while the agent is in shadow mode no step of a replacement rents, relabels or
 * destroys anything, whoever approved it (a human-approved destroy passes the shadow gate of
 * fleet/actions/decide.ts, so the hold is here, before the step). Resuming continues from the
 * stage it was held at; a new instance still loading gets its LOADING_TIMEOUT_S again from the
 * held tick, so the pause itself never times it out and destroys it.
 *
 * Bound: one hold per replacement per tick (the replacement check's MAX_STEPS_PER_TICK), no
 * provider call; told once per replacement and held stage (once-mark
 * `replacement-held:<replacementId>:<status>`, fleet/tell-once.ts).
 */
import type { ActionDeps } from "../actions/actions.ts";
import { onceKey } from "../once-notices.ts";
import { tellOnce } from "../tell-once.ts";
import { advance, type ReplacementRow } from "./replacement-rows.ts";

/** Whether the agent's steps are held now: its mode is shadow (settings.mode, else AGENT_MODE). */
export function replacementsHeld(deps: Pick<ActionDeps, "config">): boolean {
  return deps.config.mode === "shadow";
}

const STAGE_WORDS: Record<string, string> = {
  approved: "before renting the new instance",
  creating: "while its rental is being recorded",
  waiting: "while the new instance loads (it is not destroyed, even past its loading timeout)",
  finishing: "before destroying the old instance",
};

/** Holds the row where it is (no provider call), keeps a loading deadline ahead, tells a human once. */
export async function holdReplacement(deps: ActionDeps, row: ReplacementRow): Promise<"held"> {
  const renewed = deps.clock.now() + deps.config.loadingTimeoutMs;
  if (row.deadlineAt !== null && row.deadlineAt < renewed && (row.status === "creating" || row.status === "waiting"))
    await advance(deps, row.id, [row.status], { status: row.status, deadlineAt: renewed });
  try {
    await tellOnce(deps, row.agentId, {
      key: onceKey("replacement-held", String(row.id), row.status),
      title: `Replacement of ${row.oldInstanceId} held: agent ${row.agentId} is paused`,
      body: `Replacement ${row.id} of ${row.oldInstanceId} is held ${STAGE_WORDS[row.status] ?? `at ${row.status}`}: the agent is in shadow mode, so nothing is rented or destroyed. Resume the agent to continue it${row.status === "approved" ? ", or cancel the replacement (nothing is rented yet)" : ""}.`,
      severity: "warning",
      instanceId: row.oldInstanceId,
    });
  } catch (err) {
    deps.log.error("replacement hold not told", { agentId: row.agentId, replacementId: row.id, error: String(err) });
  }
  return "held";
}
