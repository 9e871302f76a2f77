/**
 * What an instance costs per hour in the state fleetwarden last saw: the rental's full price while
 * it holds its GPU (pricePerHour, which for Vast.ai is dph_total and includes storage), only its
 * storage while stopped (storagePerHour), nothing once gone. Null when the provider never said.
 */
type CostedRow = { state: string; pricePerHour: number | null; storagePerHour: number | null; goneAt: number | null };

export function costPerHour(row: CostedRow): number | null {
  if (row.goneAt !== null) return 0;
  return row.state === "stopped" ? row.storagePerHour : row.pricePerHour;
}
