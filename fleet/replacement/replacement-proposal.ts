/**
 * When a dead rental becomes a replacement proposal (issue #23 item 2): the one rule both the
 * rules policy (agent/rules/rules-replacement.ts) and the LLM's `replace_instance` tool use. An instance
 * offline, unknown or gone for REPLACE_AFTER_S (per agent; 0 = off), or whose start failed because
 * the host no longer has the GPU, is proposed through executeAction (kind `replace`), so approval
 * (by default), shadow mode, the spend gate, bounds and a human's rejection all apply.
 *
 * What stops it repeating: the open-replacement unique index (one per instance), the action key
 * `replace:<instance>:<since>` (one request per death: a repeat answers the recorded one, so a
 * human's "no" sticks for that death, and the rejection block for later ones; only a bound's
 * refusal is filed again, by a later run: requestFor), and, when the
 * provider cannot create, a once-mark: a human is told once instead.
 *
 * One death, one rental per provider account (issue #33 item 6): agents sharing a key each see
 * the same dead instance; the first proposal records the account (fleet/providers/provider-account.ts)
 * and every other agent's answers `elsewhere` (no action, no provider call), the unique index
 * `replacements_account_open` settling a race between two proposals at once.
 */
import { and, desc, eq, gt, inArray, lt, or } from "drizzle-orm";
import type { ActionDeps } from "../actions/actions.ts";
import { executeAction } from "../actions/actions.ts";
import type { ActionRow } from "../actions/action-records.ts";
import { actions, instances } from "../../schema/index.ts";
import type { ActionEvidence, ActionRequest } from "../actions/action-types.ts";
import type { RunFence } from "../../pipeline/index.ts";
import { advance, insertProposal, openReplacement, readBasis, replacementInAccount, type ReplacementRow } from "./replacement-rows.ts";
import { tellOnce } from "../tell-once.ts";
import { refusedForTheHour } from "../actions/bounds.ts";
import { HOUR_MS } from "../../runtime/time.ts";
import { onceKey } from "../once-notices.ts";
import { providerAccount } from "../providers/provider-account.ts";

/** States a provider cannot fix by a start: the host itself is lost. */
export const DEAD_STATES = ["offline", "unknown"] as const;
/** How a provider says a start failed because the host lost the GPU (the simulator's `gpu_gone`, Vast.ai's "no longer has", RunPod's "not enough free GPUs on the host machine"). */
export const HOST_NO_GPU = /no longer has the (requested )?gpu|gpu[s]? (is |are )?no longer available|not enough (free )?gpus/i;
/**
 * Vast.ai's lost GPU: the start is accepted but the container sits in `scheduling` (vast-cli's
 * `start instance`: stuck there for more than 30 s means the machine's resources are unavailable).
 * The instance is `unknown` with the message `scheduling: …` (fleet/providers/vast-instance.ts);
 * it counts as lost only after REPLACE_AFTER_S in it, never at once (a start schedules briefly).
 */
export const STUCK_SCHEDULING = /^scheduling\b/i;
/** Instances gone longer than this are history, not candidates. */
const GONE_WINDOW_MS = 24 * 3_600_000;

export interface Proposer {
  agentId: string;
  runId: number | null;
  decidedBy: ActionRequest["decidedBy"];
  fence?: RunFence | null;
  evidence?: ActionEvidence;
  model?: string;
}

export type Proposal =
  | { status: "off" | "not_dead" | "not_yet" | "unsupported" | "unknown_gpu"; detail: string }
  | { status: "open"; replacementId: number; detail: string }
  /** Another agent on the same provider account replaces (or replaced) this death: nothing filed here. */
  | { status: "elsewhere"; replacementId: number; detail: string }
  | { status: "proposed"; replacementId: number | null; result: Awaited<ReturnType<typeof executeAction>>; detail: string };

/** Since when an instance is dead enough to replace, and why; null when it is not. */
export async function deadSince(
  deps: Pick<ActionDeps, "db" | "clock">,
  agentId: string,
  instanceId: string,
): Promise<{ since: number; why: string; immediate: boolean } | null> {
  const [row] = await deps.db
    .select()
    .from(instances)
    .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId)));
  if (!row || row.replacedBy) return null;
  const [failedStart] = await deps.db
    .select()
    .from(actions)
    .where(and(eq(actions.agentId, agentId), eq(actions.instanceId, instanceId), inArray(actions.kind, ["start", "reboot"])))
    .orderBy(desc(actions.id))
    .limit(1);
  if (failedStart?.status === "failed" && HOST_NO_GPU.test(failedStart.error ?? "")) {
    return { since: failedStart.createdAt, why: `its start failed: ${failedStart.error}`, immediate: true };
  }
  if (row.goneAt !== null) {
    if (deps.clock.now() - row.goneAt > GONE_WINDOW_MS) return null;
    // Gone because it was destroyed on purpose is no death.
    const [destroyed] = await deps.db
      .select({ id: actions.id })
      .from(actions)
      .where(
        and(
          eq(actions.agentId, agentId),
          eq(actions.instanceId, instanceId),
          eq(actions.kind, "destroy"),
          inArray(actions.status, ["succeeded", "pending"]),
        ),
      )
      .limit(1);
    return destroyed ? null : { since: row.goneAt, why: "it is gone from its host", immediate: false };
  }
  if (row.state === "unknown" && STUCK_SCHEDULING.test(row.statusMessage ?? "")) {
    const started = failedStart?.status === "succeeded" ? " after a start that succeeded" : "";
    return {
      since: row.stateAt,
      why: `it has sat in scheduling${started}: its host has likely lost the GPU (${row.statusMessage})`,
      immediate: false,
    };
  }
  if ((DEAD_STATES as readonly string[]).includes(row.state)) return { since: row.stateAt, why: `it is ${row.state}`, immediate: false };
  return null;
}

/**
 * This death's request: its key and what is recorded under it. A request a bound refused
 * (APPROVALS_PER_RUN, APPROVALS_PER_HOUR, ACTIONS_PER_HOUR) is no decision, so a later run files it
 * again under a key of that run (`<death key>:run<id>`): a host that takes a dozen rentals down is
 * asked about all of them, a bound's worth per run, instead of only the first few for good. What
 * stops it repeating: the same bounds, one key per death per run (a repeat in the same run
 * answers the recorded refusal), and an hour's wait after an hour's bound refused it.
 */
async function requestFor(
  deps: Pick<ActionDeps, "db" | "clock">,
  agentId: string,
  deathKey: string,
  runId: number | null,
): Promise<{ key: string; known: ActionRow | undefined }> {
  // The death's own key, or one of its retries (`<death key>:…`, the keys from `:` up to `;`).
  const [latest] = await deps.db
    .select()
    .from(actions)
    .where(
      and(
        eq(actions.agentId, agentId),
        or(
          eq(actions.idempotencyKey, deathKey),
          and(gt(actions.idempotencyKey, `${deathKey}:`), lt(actions.idempotencyKey, `${deathKey};`)),
        ),
      ),
    )
    .orderBy(desc(actions.id))
    .limit(1);
  if (latest?.status !== "refused") return { key: latest?.idempotencyKey ?? deathKey, known: latest };
  // An hour's bound refuses again until its hour has passed: until then the refusal stands.
  if (refusedForTheHour(latest.error) && deps.clock.now() - latest.createdAt < HOUR_MS)
    return { key: latest.idempotencyKey, known: latest };
  const retry = `${deathKey}:${runId === null ? `at${deps.clock.now()}` : `run${runId}`}`;
  return { key: retry, known: retry === latest.idempotencyKey ? latest : undefined };
}

export async function proposeReplacement(deps: ActionDeps, who: Proposer, instanceId: string, note?: string): Promise<Proposal> {
  const { afterMs } = deps.config.replace;
  if (afterMs === 0) return { status: "off", detail: "replacements are off (REPLACE_AFTER_S=0)" };
  const dead = await deadSince(deps, who.agentId, instanceId);
  if (!dead) return { status: "not_dead", detail: `${instanceId} is not offline, unknown, gone or unable to start for lack of its GPU` };
  const waited = deps.clock.now() - dead.since;
  if (!dead.immediate && waited < afterMs)
    return {
      status: "not_yet",
      detail: `${instanceId}: ${dead.why} for ${Math.round(waited / 1000)} s of the ${afterMs / 1000} s before a replacement`,
    };
  if (!deps.provider.capabilities.has("create")) {
    await tellOnce(deps, who.agentId, {
      key: onceKey("replace-unsupported", instanceId, dead.since),
      title: `${instanceId} needs replacing by hand`,
      body: `${instanceId}: ${dead.why}. The ${deps.provider.kind} provider cannot rent new instances from fleetwarden, so please replace it yourself.`,
      severity: "warning",
      instanceId,
    });
    return { status: "unsupported", detail: `${deps.provider.kind} cannot rent instances; a human was told` };
  }
  const open = await openReplacement(deps, who.agentId, instanceId);
  if (open) return { status: "open", replacementId: open.id, detail: `replacement ${open.id} of ${instanceId} is already ${open.status}` };
  const account = await providerAccount(deps.provider);
  const theirs = account ? await replacementInAccount(deps, account, who.agentId, instanceId) : undefined;
  if (theirs) return elsewhere(theirs);

  const { key: idempotencyKey, known } = await requestFor(deps, who.agentId, `replace:${instanceId}:${dead.since}`, who.runId);
  const request = {
    agentId: who.agentId,
    runId: who.runId,
    instanceId,
    kind: "replace" as const,
    decidedBy: who.decidedBy,
    idempotencyKey,
    fence: who.fence ?? null,
    reason: `${dead.why}${note ? `; ${note}` : ""}`,
    ...(who.evidence ? { evidence: who.evidence } : {}),
    ...(who.model ? { model: who.model } : {}),
  };
  if (known)
    return {
      status: "proposed",
      replacementId: null,
      result: await executeAction(deps, request),
      detail: `already decided for this failure (${known.status})`,
    };

  const read = await readBasis(deps, who.agentId, instanceId);
  if (!read)
    return { status: "unknown_gpu", detail: `${instanceId}: its GPU model and count are unknown, so nothing like it can be searched` };
  const row = await insertProposal(deps, {
    agentId: who.agentId,
    oldInstanceId: instanceId,
    reason: request.reason,
    decidedBy: who.decidedBy,
    runId: who.runId,
    account,
    ...read,
  });
  if (row.agentId !== who.agentId) return elsewhere(row);
  const result = await executeAction(deps, request);
  if (result.status === "awaiting_approval")
    await advance(deps, row.id, ["proposed"], { status: "awaiting_approval", approvalId: result.approvalId ?? null });
  else if (result.status !== "succeeded")
    await advance(deps, row.id, ["proposed"], {
      status: result.status === "failed" ? "rejected" : "cancelled",
      error: result.error ?? result.status,
    });
  return {
    status: "proposed",
    replacementId: row.id,
    result,
    detail: `replacement ${row.id} of ${instanceId}: ${result.status}${result.error ? ` (${result.error})` : ""}`,
  };
}

function elsewhere(row: ReplacementRow): Proposal {
  return {
    status: "elsewhere",
    replacementId: row.id,
    detail: `${row.oldInstanceId} is replaced by agent ${row.agentId} on the same provider account (replacement ${row.id}, ${row.status}): not rented again`,
  };
}
