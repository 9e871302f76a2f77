/**
 * The actions audit as pages and as exports. A page is newest first, after a cursor (the last id
 * of the previous page); an export (CSV or JSON Lines) is every row, streamed a page at a time so
 * memory stays bounded whatever the history's size. CSV cells are quoted when they hold a quote,
 * comma or line break, and a cell a spreadsheet would run as a formula (starting with = + - @,
 * tab or CR) is prefixed with '.
 */
import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { presentAction } from "../fleet/actions/actions.ts";
import { actions } from "../schema/index.ts";

export const EXPORT_PAGE = 200;

export type AuditRow = ReturnType<typeof presentAction>;

/** One page, newest first, of ids below `cursor`; `nextCursor` is null on the last page. */
export async function actionsPage(
  db: Db,
  agentId: string,
  limit: number,
  cursor?: number,
): Promise<{ actions: AuditRow[]; nextCursor: number | null }> {
  const mine = eq(actions.agentId, agentId);
  const rows = await db
    .select()
    .from(actions)
    .where(cursor === undefined ? mine : and(mine, lt(actions.id, cursor)))
    .orderBy(desc(actions.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(presentAction);
  return { actions: page, nextCursor: rows.length > limit ? page[page.length - 1]!.id : null };
}

const COLUMNS = [
  "id",
  "createdAt",
  "finishedAt",
  "instanceId",
  "kind",
  "decidedBy",
  "decider",
  "operator",
  "status",
  "reason",
  "error",
  "runId",
  "approvalId",
  "idempotencyKey",
  "model",
  "evidence",
  "result",
] as const;

/**
 * A formula lead (OWASP CSV injection: = + - @ tab CR) at the start of the cell or after a `;` or
 * `,` (a reader that splits on either, ignoring quotes, starts a cell there), past any spaces.
 */
const FORMULA_LEAD = /(^|[;,])([ ]*)(?=[=+\-@\t\r])/g;

/** One CSV cell: formula-looking text defused with a `'` wherever a reader may start a cell, then quoted if it needs to be. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = (typeof value === "object" ? JSON.stringify(value) : String(value)).replace(FORMULA_LEAD, "$1$2'");
  return /[",;\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvLine = (row: AuditRow) => `${COLUMNS.map((c) => csvCell(row[c])).join(",")}\r\n`;

/** Every row of the agent's audit as a stream of CSV or JSON Lines, read EXPORT_PAGE rows at a time. */
export function exportActions(db: Db, agentId: string, format: "csv" | "jsonl"): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cursor: number | undefined;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = "";
      if (!started && format === "csv") text += `${COLUMNS.join(",")}\r\n`;
      started = true;
      const page = await actionsPage(db, agentId, EXPORT_PAGE, cursor);
      text += page.actions.map((row) => (format === "csv" ? csvLine(row) : `${JSON.stringify(row)}\n`)).join("");
      if (text) controller.enqueue(encoder.encode(text));
      if (page.nextCursor === null) controller.close();
      else cursor = page.nextCursor;
    },
  });
}
