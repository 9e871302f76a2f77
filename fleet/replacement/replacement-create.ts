/**
 * A replacement's create (issue #33 item 3): the fitting offers, cheapest first and at most
 * REPLACE_MAX_OFFERS, tried in order while each answer is a clear "not created", every attempt
 * recorded on the row (replacements.attempts) before the next one is sent.
 *
 * How an answer is read:
 * - taken or out of capacity (Vast.ai `no_such_ask`, Lambda `insufficient-capacity`, RunPod "no
 *   longer any instances available"): nothing was rented, the next offer is tried;
 * - a 429: nothing was rented; the row goes back to approved and a later tick tries again after a
 *   doubling wait (RATE_LIMIT_BACKOFF_MS: 1 min, then 2), at most MAX_RATE_LIMITED times per
 *   replacement (each provider's create interval is seconds);
 * - any other 4xx: a clear refusal, nothing rented, the replacement fails (another offer would be
 *   refused the same);
 * - a timeout, a 5xx or a network failure after sending: maybe rented. Only the marker label
 *   decides (replacement.ts adoptByMarker), never a second create.
 */
import type { ActionDeps } from "../actions/actions.ts";
import type { InstanceSpec, Offer } from "../providers/provider.ts";
import { classify } from "../providers/create-answer.ts";
import { advance, type ReplacementRow } from "./replacement-rows.ts";

/** A 429 on create is retried by later ticks at most this many times per replacement. */
export const MAX_RATE_LIMITED = 3;

/**
 * The wait after the first 429 before the create is tried again, doubled after each further one
 * (1 min, 2 min): longer than every provider's documented create interval (Lambda Cloud: one
 * launch per 10 s; Vast.ai answers "API requests too frequent" for a few seconds), so a retry is
 * never itself rate-limited by the interval, and at most MAX_RATE_LIMITED are sent.
 */
export const RATE_LIMIT_BACKOFF_MS = 60_000;

/** When a replacement whose last create was rate-limited may try again; null when it may now. */
export function rateLimitedUntil(attempts: readonly CreateAttempt[]): number | null {
  const last = attempts.at(-1);
  if (last?.outcome !== "rate_limited") return null;
  const limited = attempts.filter((a) => a.outcome === "rate_limited").length;
  return last.at + RATE_LIMIT_BACKOFF_MS * 2 ** (limited - 1);
}

export { OFFER_GONE } from "../providers/create-answer.ts";

export interface CreateAttempt {
  offerId: string;
  pricePerHour: number;
  at: number;
  outcome: "created" | "taken" | "rate_limited" | "refused" | "maybe_rented";
  error?: string;
}

export type CreateResult = { id: string; offer: Offer } | { outcome: "waiting" } | { failed: string };

/** Tries the offers in order on the claimed (`creating`) row; `attempts` gains one entry per create sent. */
export async function createFromOffers(
  deps: ActionDeps,
  row: ReplacementRow,
  offers: readonly Offer[],
  spec: InstanceSpec,
  attempts: CreateAttempt[],
): Promise<CreateResult> {
  for (const [i, offer] of offers.entries()) {
    // The offer about to be tried is on the row before the create is sent (a crash finds it by the marker).
    if (i > 0 && !(await advance(deps, row.id, ["creating"], { status: "creating", offer, attempts }))) return { outcome: "waiting" };
    const at = deps.clock.now();
    try {
      const { id } = await deps.provider.create(offer, { ...spec, label: row.marker });
      attempts.push({ offerId: offer.id, pricePerHour: offer.pricePerHour, at, outcome: "created" });
      await advance(deps, row.id, ["creating"], { status: "creating", attempts });
      return { id, offer };
    } catch (err) {
      const outcome = classify(err);
      const error = err instanceof Error ? err.message : String(err);
      attempts.push({ offerId: offer.id, pricePerHour: offer.pricePerHour, at, outcome, error });
      deps.log.info("replacement create attempt", { agentId: row.agentId, replacementId: row.id, offer: offer.id, outcome, error });
      if (outcome === "taken") continue;
      if (outcome === "maybe_rented") {
        await advance(deps, row.id, ["creating"], { status: "creating", attempts });
        return { outcome: "waiting" };
      }
      if (outcome === "rate_limited") {
        const limited = attempts.filter((a) => a.outcome === "rate_limited").length;
        if (limited < MAX_RATE_LIMITED) {
          // Nothing was rented: back to approved, searched and tried again by the next tick.
          await advance(deps, row.id, ["creating"], { status: "approved", attempts, createAttemptedAt: null });
          return { outcome: "waiting" };
        }
        await advance(deps, row.id, ["creating"], { status: "creating", attempts });
        return { failed: `the provider rate-limited the create ${limited} times (429): ${error}` };
      }
      await advance(deps, row.id, ["creating"], { status: "creating", attempts });
      return { failed: `the provider refused the create: ${error}` };
    }
  }
  await advance(deps, row.id, ["creating"], { status: "creating", attempts });
  return {
    failed: `every offer tried was taken or out of capacity (${attempts
      .filter((a) => a.outcome === "taken")
      .map((a) => `${a.offerId} at $${a.pricePerHour}/h`)
      .join(", ")})`,
  };
}
