/**
 * Human output: rows as an aligned plain-text table (columns picked and named by the command), and
 * times as "5m ago". Scripts use `--json` instead, which prints the API's own answer.
 */
export type Column<T> = [header: string, cell: (row: T) => unknown];

const text = (value: unknown): string => {
  if (value === null || value === undefined || value === "") return "-";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(2);
  return String(value);
};

export function table<T>(rows: readonly T[], columns: readonly Column<T>[], empty = "(none)"): string {
  if (rows.length === 0) return empty;
  const cells = rows.map((row) => columns.map(([, cell]) => text(cell(row)).replace(/\s+/g, " ")));
  const headers = columns.map(([header]) => header);
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(headers), ...cells.map(line)].join("\n");
}

const span = (s: number): string =>
  s < 90 ? `${s}s` : s < 5400 ? `${Math.round(s / 60)}m` : s < 172_800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`;

/** A time as "5m ago" or "in 2h". */
export function ago(ms: unknown, now = Date.now()): string {
  if (typeof ms !== "number") return "-";
  const s = Math.round((now - ms) / 1000);
  return s >= 0 ? `${span(s)} ago` : `in ${span(-s)}`;
}

export const usd = (value: unknown): string => (typeof value === "number" ? `$${value.toFixed(2)}` : "-");
