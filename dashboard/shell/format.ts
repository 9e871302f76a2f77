/**
 * How the dashboard writes times, durations, money and token counts: UTC times with a relative
 * hint computed from the server clock (pages are re-rendered by the live updates, so the hint
 * stays fresh), and plain units a person reads without a legend.
 */

export function utcTime(at: number | string | null | undefined): string {
  if (at === null || at === undefined) return "—";
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "—";
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

export function relative(at: number | string | null | undefined, now: number): string {
  if (at === null || at === undefined) return "";
  const ms = new Date(at).getTime() - now;
  const abs = Math.abs(ms);
  const span =
    abs < 1000
      ? "now"
      : abs < 60_000
        ? `${Math.round(abs / 1000)} s`
        : abs < 3_600_000
          ? `${Math.round(abs / 60_000)} min`
          : abs < 172_800_000
            ? `${Math.round(abs / 3_600_000)} h`
            : `${Math.round(abs / 86_400_000)} days`;
  if (span === "now") return "now";
  return ms > 0 ? `in ${span}` : `${span} ago`;
}

export function duration(startedAt: string | null, finishedAt: string | null, now: number): string {
  if (!startedAt) return "—";
  const end = finishedAt ? new Date(finishedAt).getTime() : now;
  const ms = Math.max(0, end - new Date(startedAt).getTime());
  const text = ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
  return finishedAt ? text : `${text} so far`;
}

export const tokens = (n: number) => `${n.toLocaleString("en-US")} tokens`;

export const dollarsPerHour = (price: number | null | undefined) =>
  price === null || price === undefined ? "—" : `$${price.toFixed(2)}/h`;

export function percent(part: number, whole: number): number {
  if (whole <= 0) return 0;
  return Math.min(100, Math.round((part / whole) * 100));
}
