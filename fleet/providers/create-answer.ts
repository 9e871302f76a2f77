/**
 * How a provider's answer to a create is read, shared by a replacement's create
 * (fleet/replacement/replacement-create.ts) and a rental on a lease (fleet/actions/rent.ts):
 * - taken or out of capacity (Vast.ai `no_such_ask`, Lambda `insufficient-capacity`, RunPod "no
 *   longer any instances available"): nothing was rented, the next offer may be tried;
 * - a 429: nothing was rented, but not now;
 * - any other 4xx: a clear refusal, nothing rented;
 * - a timeout, a 5xx or a network failure after sending: maybe rented (never create again blindly).
 */
import { ProviderError } from "./provider.ts";

/** How the providers say an offer was taken or has no capacity left (nothing was rented). */
export const OFFER_GONE = /no_such_ask|insufficient[-_ ]capacity|no longer any instances available|not enough (free )?gpus|not available/i;

export type CreateOutcome = "created" | "taken" | "rate_limited" | "refused" | "maybe_rented";

export function classify(err: unknown): Exclude<CreateOutcome, "created"> {
  if (!(err instanceof ProviderError) || err.status === null) return "maybe_rented";
  if (err.status === 429) return "rate_limited";
  if (err.status === 408 || err.status >= 500) return "maybe_rented";
  return OFFER_GONE.test(err.message) ? "taken" : "refused";
}
