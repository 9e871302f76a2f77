/**
 * What an instance costs per hour in the state fleetwarden last saw — the one home of that rule,
 * used by spend accrual (fleet/economics/spend.ts), the API, the dashboard and the prompt's snapshot. From
 * Vast.ai's billing help (https://docs.vast.ai/billing-help): the rental's full price while it
 * holds its GPU (pricePerHour, which for Vast.ai is dph_total and includes storage: running,
 * loading, rebooting, exited — the contract stays active until stopped — frozen, and unknown,
 * counted as rented to err on the side of spending), only its storage in any other state of an
 * instance that still exists (stopped, created, offline: storagePerHour), nothing once gone.
 * Null when the provider never said what that state costs.
 */
type CostedRow = { state: string; pricePerHour: number | null; storagePerHour: number | null; goneAt?: number | null };

/** States in which the provider bills the rental itself. */
export const RENTED_STATES: ReadonlySet<string> = new Set(["running", "loading", "rebooting", "exited", "frozen", "unknown"]);

export function costPerHour(row: CostedRow): number | null {
  if (row.goneAt !== null && row.goneAt !== undefined) return 0;
  return RENTED_STATES.has(row.state) ? row.pricePerHour : row.storagePerHour;
}
