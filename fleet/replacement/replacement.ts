/**
 * A replacement's state machine (issue #23 item 2), one step per call, each step a
 * compare-and-set on the status it leaves (fleet/replacement/replacement-rows.ts `advance`), so a stale or
 * concurrent caller (an overlapping tick, a retried approval) cannot take a step twice:
 *
 *   approved → search offers like the old instance (same GPU model and count, at least its disk,
 *     at most REPLACE_MAX_PRICE_FACTOR × its price, reliability ≥ REPLACE_MIN_RELIABILITY, never
 *     its machine); none → failed, a human told once.
 *   approved → creating: `createAttemptedAt` and the offer are written BEFORE create is called;
 *     only the caller that moved the row calls create, so there is never a second create.
 *   creating → waiting: create's id recorded; after a crash between create and this record, the
 *     instance is found by the replacement's marker label instead (never created again); none by
 *     the deadline → failed, a human told once.
 *   waiting → finishing → done: only once the new instance runs: its label set back to the old
 *     one's, the row claimed (`finishing`), the old instance destroyed (executeAction, under the
 *     replacement's own key, as the approver), lineage recorded on both. Not running by
 *     LOADING_TIMEOUT_S → the row claimed (`failed`) first, then the new one destroyed, a human
 *     told once, and nothing retried without a human.
 *
 * Every destructive step claims the row before it acts: two steppers reading the same row at the
 * deadline (one sees the new instance loading, the other running) used to destroy both the new
 * and the old instance; now whichever claims first acts and the other does nothing.
 */
import { eq } from "drizzle-orm";
import type { ActionDeps } from "../actions/actions.ts";
import { executeAction } from "../actions/actions.ts";
import { replacements } from "../../schema/index.ts";
import type { InstanceSpec, Offer, OfferQuery } from "../providers/provider.ts";
import { labelAsRented } from "../providers/scoped-provider.ts";
import { advance, IN_FLIGHT, type Basis, type ReplacementRow } from "./replacement-rows.ts";
import { holdReplacement, replacementsHeld } from "./replacement-hold.ts";
import { createFromOffers, rateLimitedUntil, type CreateAttempt } from "./replacement-create.ts";
import { recordLineage, type Running } from "./replacement-lineage.ts";
import { tellOnce } from "../tell-once.ts";
import { tellStage } from "./replacement-told.ts";
import { onceKey } from "../once-notices.ts";
import type { ActionRequest } from "../actions/action-types.ts";

/** States of an old instance that is alive again: the replacement leaves it to a human, never destroys it. */
const CAME_BACK = ["created", "loading", "running", "rebooting"] as const;

/** Offers asked for per search, cheapest first. */
const OFFERS_PER_SEARCH = 5;

/** What one step did, for the tick's report and the logs. */
export type StepOutcome = "created" | "adopted" | "waiting" | "done" | "failed" | "idle" | "held";

/** The offer query of a replacement: like the old instance, excluding its machine. */
export function offerQuery(deps: Pick<ActionDeps, "config">, basis: Basis): OfferQuery {
  const { maxPriceFactor, minReliability, maxPricePerHour } = deps.config.replace;
  return {
    gpuName: basis.gpuName,
    gpuCount: basis.gpuCount,
    minDiskGb: basis.diskGb,
    // An unknown old price is capped by the agent's REPLACE_MAX_PRICE_PER_HOUR, never left open (0: chooseAndCreate asks a human).
    maxPricePerHour: basis.pricePerHour === null ? maxPricePerHour || 0 : Math.round(basis.pricePerHour * maxPriceFactor * 10_000) / 10_000,
    minReliability,
    excludeMachineIds: basis.machineId ? [basis.machineId] : [],
    limit: OFFERS_PER_SEARCH,
  };
}

/** Takes the replacement's next step; provider errors leave it where it is for the next tick. */
export async function stepReplacement(deps: ActionDeps, row: ReplacementRow): Promise<StepOutcome> {
  // Shadow mode: no step that could rent or destroy (fleet/replacement/replacement-hold.ts).
  if (replacementsHeld(deps) && (IN_FLIGHT as readonly string[]).includes(row.status)) return holdReplacement(deps, row);
  switch (row.status) {
    case "approved":
      return chooseAndCreate(deps, row);
    case "creating":
      return row.newInstanceId ? awaitRunning(deps, row) : adoptByMarker(deps, row);
    case "waiting":
      return awaitRunning(deps, row);
    case "finishing":
      return finish(deps, row);
    default:
      return "idle";
  }
}

async function chooseAndCreate(deps: ActionDeps, row: ReplacementRow): Promise<StepOutcome> {
  const basis = row.basis as Basis;
  const spec = row.spec as InstanceSpec;
  const now = deps.clock.now();
  // An image (Vast.ai, RunPod), or what Lambda Cloud launches from (it reports no image).
  if (!spec?.image && !spec?.launch)
    return fail(deps, row, ["approved"], `the image of ${row.oldInstanceId} is unknown, so no like-for-like instance can be made`);
  if (basis.pricePerHour === null && !deps.config.replace.maxPricePerHour)
    return fail(
      deps,
      row,
      ["approved"],
      `the price of ${row.oldInstanceId} is unknown and REPLACE_MAX_PRICE_PER_HOUR is not set, so a human must choose what to rent`,
    );
  // After a 429, nothing is searched or sent until its backoff has passed (bounded: MAX_RATE_LIMITED).
  const until = rateLimitedUntil((row.attempts as CreateAttempt[] | null) ?? []);
  if (until !== null && now < until) return "waiting";
  let offers: Offer[];
  try {
    const cap = offerQuery(deps, basis).maxPricePerHour;
    // The cap holds even where a provider's search does not apply it.
    offers = (await deps.provider.offers(offerQuery(deps, basis))).filter((o) => cap === null || o.pricePerHour <= cap);
  } catch (err) {
    // A provider down: searched again next tick, for at most LOADING_TIMEOUT_S after the approval.
    if (now - row.updatedAt < deps.config.loadingTimeoutMs) return "waiting";
    return fail(deps, row, ["approved"], `could not search offers: ${message(err)}`);
  }
  const offer = offers[0];
  if (!offer) {
    const q = offerQuery(deps, basis);
    return fail(
      deps,
      row,
      ["approved"],
      `no offer like ${row.oldInstanceId}: ${q.gpuCount}× ${q.gpuName}, disk ≥ ${q.minDiskGb ?? "any"} GB, ≤ $${q.maxPricePerHour ?? "any"}/h, reliability ≥ ${q.minReliability}, not on machine ${basis.machineId ?? "?"}`,
    );
  }
  // The one create at a time: only the caller that moves approved → creating calls the provider,
  // and it tries the next offer only after a clear "not created" for the one before.
  const tried = offers.slice(0, deps.config.replace.maxOffers);
  const attempts: CreateAttempt[] = [...((row.attempts as CreateAttempt[] | null) ?? [])];
  const claimed = await advance(deps, row.id, ["approved"], {
    status: "creating",
    createAttemptedAt: now,
    offer,
    deadlineAt: now + deps.config.loadingTimeoutMs,
  });
  if (!claimed) return "idle";
  const created = await createFromOffers(deps, claimed, tried, spec, attempts);
  if ("failed" in created) return fail(deps, claimed, ["creating"], created.failed);
  if ("outcome" in created) return created.outcome;
  const { id } = created;
  const recorded = await advance(deps, row.id, ["creating"], {
    status: "waiting",
    offer: created.offer,
    newInstanceId: id,
    deadlineAt: deps.clock.now() + deps.config.loadingTimeoutMs,
  });
  if (!recorded) await releaseUntracked(deps, row, id);
  else await tellStage(deps, recorded, "rented", { newId: id, offer });
  deps.log.info("replacement created", {
    agentId: row.agentId,
    replacementId: row.id,
    oldInstanceId: row.oldInstanceId,
    newInstanceId: id,
    offer: created.offer.id,
    attempts: attempts.length,
  });
  return "created";
}

/**
 * A create that returned after another stepper moved the row on without it (it failed the row at
 * its deadline, finding no marker while this create was still on its way): nobody would ever look
 * after the rented instance, so it is destroyed rather than left running and billed.
 */
async function releaseUntracked(deps: ActionDeps, row: ReplacementRow, id: string): Promise<void> {
  const [now] = await deps.db.select({ newInstanceId: replacements.newInstanceId }).from(replacements).where(eq(replacements.id, row.id));
  if (now?.newInstanceId === id) return; // adopted by its marker meanwhile: tracked
  deps.log.info("replacement created an instance its row no longer tracks; destroying it", {
    agentId: row.agentId,
    replacementId: row.id,
    newInstanceId: id,
  });
  await executeAction(deps, {
    ...asApprover(row, id, `replacement:${row.id}:destroy-untracked`),
    kind: "destroy",
    reason: `replacement ${row.id} had already failed when its create returned`,
  });
}

/** After a crash between create and its record: the instance carrying the marker, never a second create. */
async function adoptByMarker(deps: ActionDeps, row: ReplacementRow): Promise<StepOutcome> {
  const listed = await deps.provider.list().catch(() => null);
  // The marker as the agent's provider put it on (an agent's filter claims what it rents by its label).
  const marker = labelAsRented(deps.provider, row.marker);
  const found = listed?.find((i) => i.label === marker);
  if (found) {
    const adopted = await advance(deps, row.id, ["creating"], { status: "waiting", newInstanceId: found.id });
    if (adopted) await tellStage(deps, adopted, "rented", { newId: found.id, offer: adopted.offer as Offer | null });
    return "adopted";
  }
  if (deps.clock.now() < (row.deadlineAt ?? 0)) return "waiting";
  return fail(
    deps,
    row,
    ["creating"],
    `a create was attempted at ${new Date(row.createAttemptedAt ?? 0).toISOString()} but no instance carries its marker ${row.marker}; not tried again`,
  );
}

async function awaitRunning(deps: ActionDeps, row: ReplacementRow): Promise<StepOutcome> {
  const newId = row.newInstanceId!;
  const now = deps.clock.now();
  const fresh = await deps.provider.get(newId).catch(() => undefined);
  if (fresh === undefined) return now < (row.deadlineAt ?? 0) ? "waiting" : timedOut(deps, row, "the provider did not answer");
  if (fresh?.state !== "running")
    return fresh && now < (row.deadlineAt ?? 0) ? "waiting" : timedOut(deps, row, fresh ? `still ${fresh.state}` : "gone");

  const basis = row.basis as Basis;
  if (basis.label && deps.provider.capabilities.has("label")) {
    await executeAction(deps, {
      ...asApprover(row, newId, `replacement:${row.id}:label`),
      kind: "label",
      // Kept within the agent's filter (fleet/providers/scoped-provider.ts): a label that left it would lose the new instance.
      label: labelAsRented(deps.provider, basis.label),
      reason: `replacement ${row.id}: the old instance's label`,
    });
  }
  // The claim: only the stepper that moves it to `finishing` destroys the old one (a second one, or a timeout, does nothing).
  const claimed = await advance(deps, row.id, ["waiting", "creating"], { status: "finishing", newInstanceId: newId });
  if (!claimed) return "idle";
  await tellStage(deps, claimed, "running", { newId });
  return finish(deps, claimed, fresh);
}

/** The new one runs and the row is claimed: the old one destroyed, then done with lineage. */
async function finish(deps: ActionDeps, row: ReplacementRow, seen?: Running): Promise<StepOutcome> {
  const newId = row.newInstanceId!;
  const fresh = seen ??
    (await deps.provider.get(newId).catch(() => undefined)) ?? { label: null, gpuName: null, gpuCount: null, pricePerHour: null };
  // Only now, with the new one running, is the old one destroyed.
  const old = await deps.provider.get(row.oldInstanceId).catch(() => undefined);
  // Re-read: an old instance that came back (running, or booting, rebooting) is no longer dead, and is never destroyed by a replacement.
  if (old && (CAME_BACK as readonly string[]).includes(old.state))
    return fail(
      deps,
      row,
      ["finishing"],
      `${newId} runs, but ${row.oldInstanceId} is ${old.state === "running" ? "running" : `${old.state}, coming up`} again, so it was not destroyed: a human decides which to keep`,
    );
  if (old !== null) {
    const destroyed = await executeAction(deps, {
      ...asApprover(row, row.oldInstanceId, `replacement:${row.id}:destroy-old`),
      kind: "destroy",
      reason: `replaced by ${newId} (replacement ${row.id})`,
    });
    if (destroyed.status === "awaiting_approval") return "waiting";
    if (destroyed.status !== "succeeded")
      return fail(
        deps,
        row,
        ["finishing"],
        `${newId} runs, but destroying ${row.oldInstanceId} failed: ${destroyed.error ?? destroyed.status}`,
      );
  }
  const done = await advance(deps, row.id, ["finishing"], { status: "done", error: null });
  if (!done) return "idle";
  await recordLineage(deps, row, newId, fresh);
  await tellStage(deps, done, "done", { newId });
  deps.log.info("replacement done", {
    agentId: row.agentId,
    replacementId: row.id,
    oldInstanceId: row.oldInstanceId,
    newInstanceId: newId,
  });
  return "done";
}

/** The new one did not come up in time: the row claimed as failed, then the new one destroyed, a human told once; no retry. */
async function timedOut(deps: ActionDeps, row: ReplacementRow, why: string): Promise<StepOutcome> {
  const newId = row.newInstanceId!;
  const late = `${newId} did not reach running within ${Math.round(deps.config.loadingTimeoutMs / 1000)} s (${why})`;
  const claimed = await advance(deps, row.id, ["waiting", "creating"], { status: "failed", error: `${late}; it is being destroyed` });
  if (!claimed) return "idle";
  const destroyed = await executeAction(deps, {
    ...asApprover(row, newId, `replacement:${row.id}:destroy-new`),
    kind: "destroy",
    reason: `replacement ${row.id}: did not reach running in time`,
  });
  const what = destroyed.status === "succeeded" ? "destroyed" : `not destroyed (${destroyed.error ?? destroyed.status}): please destroy it`;
  const error = `${late}; it was ${what}. ${row.oldInstanceId} is left as it is; a new replacement needs a human.`;
  await advance(deps, row.id, ["failed"], { status: "failed", error });
  await tellFailed(deps, row, error);
  return "failed";
}

/** The approver's request: a human when a human approved the replacement (never asked twice). */
function asApprover(row: ReplacementRow, instanceId: string, idempotencyKey: string): Omit<ActionRequest, "kind"> {
  const human = row.approvalId !== null || row.decidedBy === "human";
  return {
    agentId: row.agentId,
    runId: null,
    instanceId,
    decidedBy: human ? "human" : (row.decidedBy as ActionRequest["decidedBy"]),
    idempotencyKey,
    // The approval carried out; no `operator`: that would make it an operator's own request, asked again.
    ...(row.approvalId !== null ? { approvalId: row.approvalId } : {}),
  };
}

/** Failed, and a human told once (once-mark `replacement-failed:<old>:<id>`). */
async function fail(deps: ActionDeps, row: ReplacementRow, from: readonly string[], error: string): Promise<StepOutcome> {
  const failed = await advance(deps, row.id, from, { status: "failed", error });
  if (!failed) return "idle";
  await tellFailed(deps, row, error);
  return "failed";
}

async function tellFailed(deps: ActionDeps, row: ReplacementRow, error: string): Promise<void> {
  deps.log.info("replacement failed", { agentId: row.agentId, replacementId: row.id, error });
  await tellOnce(deps, row.agentId, {
    key: onceKey("replacement-failed", row.oldInstanceId, row.id),
    title: `Replacement of ${row.oldInstanceId} failed`,
    body: `${error}\nfleetwarden will not try again on its own.`,
    severity: "warning",
    instanceId: row.oldInstanceId,
  });
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
