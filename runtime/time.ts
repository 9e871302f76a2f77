/**
 * Time as every layer formats and measures it: ISO strings for the API and dashboard, and the
 * durations the pipeline, fleet and notifications share. Lives at the bottom so fleet/ and
 * notify/ need not import it from triggers/.
 */
export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** ISO 8601 (UTC) for a ms epoch; null stays null. */
export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
