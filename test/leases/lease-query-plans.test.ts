/**
 * The lease expiry and orphan checks read in every tick's snapshot, so their reads must not grow
 * with history: a lease keeps its row when it ends, and once-marks are never pruned. Each read is
 * explained (`EXPLAIN QUERY PLAN`, real libSQL, with its own arguments): leases are read through the
 * partial index of open leases (never the primary key's agent prefix, which holds every lease the
 * agent ever had), once-marks by key or today's key range only.
 */
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { checkLeaseExpiry } from "../../fleet/leases/lease-expiry.ts";
import { checkOrphans } from "../../fleet/leases/orphans.ts";
import { createTestDeps } from "../support/test-deps.ts";

type Query = { toSQL(): { sql: string; params: unknown[] } };

async function plans(check: typeof checkLeaseExpiry | typeof checkOrphans) {
  const deps = await createTestDeps();
  const reads = check.reads(deps, "default", deps.clock.now()) as unknown as Record<string, Query>;
  const out: Record<string, string[]> = {};
  for (const [name, query] of Object.entries(reads)) {
    const { sql: text, params } = query.toSQL();
    const args = [...params];
    const bound = text.replace(/\?/g, () => {
      const p = args.shift();
      return typeof p === "string" ? `'${p.replace(/'/g, "''")}'` : String(p);
    });
    const rows = (await deps.db.all(sql.raw(`explain query plan ${bound}`))) as { detail: string }[];
    out[name] = rows.map((r) => r.detail);
  }
  return out;
}

const growing = /^(SCAN|SEARCH) (leases|once_notices|o)\b/;

describe("the lease checks' snapshot reads", () => {
  it("read leases through the open-lease index and once-marks by key", async () => {
    const all = { ...(await plans(checkLeaseExpiry)), ...(await plans(checkOrphans)) };
    for (const [name, details] of Object.entries(all)) {
      for (const detail of details.filter((d) => growing.test(d))) {
        const ok =
          detail.includes("USING INDEX leases_open") || /INDEX sqlite_autoindex_once_notices_1 \(agent_id=\? AND key[=>]/.test(detail);
        expect(ok, `${name}: ${detail}`).toBe(true);
      }
    }
    expect(all.due!.some((d) => d.includes("leases_open"))).toBe(true);
    expect(all.ownerless!.some((d) => d.includes("leases_open"))).toBe(true);
  });
});
