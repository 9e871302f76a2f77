/**
 * The rules policy's economics (issue 21, part 4): an interruptible instance stopped by a higher
 * bid arrives as a state event with `payload.reason = "outbid"` (written by the telemetry side);
 * a restart cannot win it back without a higher bid, so the rules policy tells a human and leaves
 * it alone — the exited-restart loop skips it. What bounds the notice: the event is consumed by
 * one run, and a run that re-claims it after a failure folds into the stored notice (dedup key
 * `outbid:<instance>:<change time>`, the same for a webhook and reconciliation reporting the same
 * change). Idleness, spend and expiry are judged by the economics tick check
 * (fleet/economics/economics-check.ts) whoever decides, and the spend limit by executeAction's gate
 * (the action table, fleet/actions/decide.ts), so the rules policy and the LLM meet the same rules.
 */
import type { RunContext } from "../../pipeline/index.ts";
import type { AgentDeps } from "../deps.ts";
import type { Notify } from "./rules-escalation.ts";

type Context = Pick<RunContext<AgentDeps>, "events">;

interface OutbidChange {
  instanceId: string;
  at: string;
}

function outbidChanges(context: Context): OutbidChange[] {
  const seen = new Map<string, OutbidChange>();
  for (const event of context.events) {
    const payload = event.payload as { instanceId?: unknown; reason?: unknown; at?: unknown } | null;
    if (payload?.reason !== "outbid" || typeof payload.instanceId !== "string") continue;
    seen.set(payload.instanceId, { instanceId: payload.instanceId, at: typeof payload.at === "string" ? payload.at : String(event.id) });
  }
  return [...seen.values()];
}

/** Tells a human about each outbid instance this run heard of; answers the instances not to restart. */
export async function economicsByRules(context: Context, notify: Notify, decisions: string[]): Promise<Set<string>> {
  const outbid = outbidChanges(context);
  for (const change of outbid) {
    await notify(
      change.instanceId,
      `Instance ${change.instanceId} was outbid`,
      `${change.instanceId} is an interruptible rental and was stopped by a higher bid at ${change.at}. outbid: cannot restart without a higher bid, so the rules policy left it alone; raise the bid or rent another instance.`,
      "warning",
      `outbid:${change.instanceId}:${change.at}`,
    );
    decisions.push(`did not restart ${change.instanceId}: outbid, it cannot restart without a higher bid`);
  }
  return new Set(outbid.map((c) => c.instanceId));
}
