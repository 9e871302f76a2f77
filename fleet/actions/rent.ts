/**
 * Carrying out a rental on a lease (issue #35, item 2), once the action table let it act and its
 * key is claimed: the offers like the asked GPU model and count, within its max $/h and at least
 * its disk, cheapest first; tried in order (at most REPLACE_MAX_OFFERS, the replacement's bound)
 * while the answer is a clear "taken" (fleet/providers/create-answer.ts `classify`, as a replacement reads it); the
 * lease recorded (owner, client, purpose, end) and the owner and lease end written into the
 * provider's label at create, so they survive fleetwarden. A "maybe rented" answer (timeout, 5xx)
 * is never retried: it is recorded failed with that warning, and the lease label finds it.
 *
 * Bounds: one provider search and at most REPLACE_MAX_OFFERS creates per claimed action (a repeat
 * of the key answers with its record), and an owner's rentals per hour are a gate in decide.ts.
 */
import { ProviderError, type Offer } from "../providers/provider.ts";
import { classify } from "../providers/create-answer.ts";
import { openLease } from "../leases/leases.ts";
import { finishAction } from "./action-records.ts";
import { tellMoneyMove } from "./money-told.ts";
import type { FleetDeps } from "../deps.ts";
import type { ActionRequest, ActionResult, RentSpec } from "./action-types.ts";

/** The offers one search asks for (the tries are bounded by REPLACE_MAX_OFFERS). */
const OFFERS_PER_SEARCH = 20;

type ActionDeps = Pick<FleetDeps, "db" | "clock" | "config" | "provider" | "scheduler" | "log">;

/** The provider label of a leased instance: the agent's filter prefix, then owner and lease end. */
export function leaseLabel(rent: Pick<RentSpec, "labelPrefix" | "owner">, endsAt: number): string {
  const owner = rent.owner.replace(/[^\w.@-]/g, "_").slice(0, 64);
  return `${rent.labelPrefix ?? ""}fw-lease owner=${owner} until=${new Date(endsAt).toISOString()}`;
}

export async function rent(
  deps: ActionDeps,
  request: ActionRequest,
  actionId: number,
  base: Pick<ActionResult, "actionId" | "repeated" | "approvalId">,
): Promise<ActionResult> {
  const spec = request.rent;
  const fail = async (error: string, result: Record<string, unknown>): Promise<ActionResult> => {
    await finishAction(deps, actionId, { status: "failed", result, error });
    return { ...base, status: "failed", error };
  };
  if (!spec) return fail("a rent action needs what to rent", { providerCalled: false });

  let offers: Offer[];
  try {
    offers = await deps.provider.offers({
      gpuName: spec.gpuName,
      gpuCount: spec.gpuCount,
      minDiskGb: spec.diskGb,
      maxPricePerHour: spec.maxPricePerHour,
      minReliability: null,
      excludeMachineIds: [],
      limit: OFFERS_PER_SEARCH,
    });
  } catch (err) {
    return fail(`the offer search failed: ${err instanceof Error ? err.message : String(err)}`, { providerCalled: false });
  }
  const tried = offers.slice(0, deps.config.replace.maxOffers);
  if (tried.length === 0)
    return fail(`no offer of ${spec.gpuCount}× ${spec.gpuName} at most $${spec.maxPricePerHour}/h with disk ≥ ${spec.diskGb ?? "any"} GB`, {
      providerCalled: false,
    });

  const endsAt = deps.clock.now() + spec.leaseSeconds * 1000;
  const label = leaseLabel(spec, endsAt);
  const attempts: { offerId: string; pricePerHour: number; outcome: string; error?: string }[] = [];
  for (const offer of tried) {
    try {
      const { id } = await deps.provider.create(offer, { image: spec.image, env: {}, label, diskGb: spec.diskGb });
      attempts.push({ offerId: offer.id, pricePerHour: offer.pricePerHour, outcome: "created" });
      const lease = await openLease(deps, {
        agentId: request.agentId,
        instanceId: id,
        owner: spec.owner,
        client: spec.client,
        purpose: spec.purpose,
        endsAt,
      });
      await finishAction(deps, actionId, {
        status: "succeeded",
        result: { providerCalled: true, provider: deps.provider.kind, instanceId: id, offer, label, leaseEndsAt: lease.endsAt, attempts },
      });
      // Rented without a human deciding (a model, or a coding agent for its operator): told once, with its $/h.
      const told = `${request.reason ?? "rented"}; ${offer.gpuCount}× ${offer.gpuName} at $${offer.pricePerHour}/h for ${spec.owner}, lease until ${new Date(lease.endsAt).toISOString()}`;
      await tellMoneyMove(deps, { ...request, instanceId: id, reason: told }, actionId);
      deps.log.info("rented on a lease", {
        agentId: request.agentId,
        actionId,
        instanceId: id,
        owner: spec.owner,
        pricePerHour: offer.pricePerHour,
      });
      return { ...base, status: "succeeded", instanceId: id, pricePerHour: offer.pricePerHour, leaseEndsAt: lease.endsAt };
    } catch (err) {
      const outcome = classify(err);
      const error = err instanceof Error ? err.message : String(err);
      attempts.push({ offerId: offer.id, pricePerHour: offer.pricePerHour, outcome, error });
      if (outcome === "taken") continue;
      const warning = outcome === "maybe_rented" ? ` (it may have been rented: look for the label "${label}")` : "";
      const httpStatus = err instanceof ProviderError ? err.status : null;
      return fail(`the provider refused the rental: ${error}${warning}`, {
        providerCalled: true,
        provider: deps.provider.kind,
        httpStatus,
        attempts,
      });
    }
  }
  return fail(`every offer tried was taken or out of capacity (${attempts.map((a) => a.offerId).join(", ")})`, {
    providerCalled: true,
    provider: deps.provider.kind,
    attempts,
  });
}
