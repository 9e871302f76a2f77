/**
 * GET /api/agents/:agent/actions: pages newest first with a cursor (the JSON shape as before, plus
 * nextCursor; a bad cursor is a 400), and format=csv|jsonl exports every row of the agent (more
 * than one internal page) with its type and file name, CSV cells quoted and formulas defused.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { csvCell, EXPORT_PAGE } from "../../jobs/actions-audit.ts";
import { actions } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

const ROWS = EXPORT_PAGE * 2 + 5;

async function setup() {
  const deps = await createTestDeps();
  const now = deps.clock.now();
  const row = (i: number, agentId = "default") => ({
    agentId,
    runId: null,
    instanceId: `sim-${i}`,
    kind: "stop",
    decidedBy: "rules",
    idempotencyKey: `k-${agentId}-${i}`,
    status: "succeeded",
    reason: `row ${i}`,
    createdAt: now + i,
  });
  for (let start = 0; start < ROWS; start += 100) {
    await deps.db.insert(actions).values(Array.from({ length: Math.min(100, ROWS - start) }, (_, j) => row(start + j)));
  }
  await deps.db.insert(actions).values({ ...row(ROWS), reason: '=HYPERLINK("http://evil"), then\na new line' });
  await deps.db.insert(actions).values(row(0, "other"));
  const app = buildApp(() => deps);
  const get = (query: string) => app.request(`/api/agents/default/actions${query}`, { headers: authHeaders() });
  return { deps, get };
}

describe("actions audit", () => {
  it("pages newest first by cursor until nextCursor is null", async () => {
    const { get } = await setup();
    const first = await (await get("?limit=200")).json();
    expect(first.actions).toHaveLength(200);
    expect(first.actions[0].reason).toMatch(/^=HYPERLINK/);
    expect(first.nextCursor).toBe(first.actions[199].id);
    const seen: number[] = first.actions.map((a: { id: number }) => a.id);
    let cursor = first.nextCursor;
    while (cursor !== null) {
      const page = await (await get(`?limit=200&cursor=${cursor}`)).json();
      seen.push(...page.actions.map((a: { id: number }) => a.id));
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(ROWS + 1);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("answers a bad cursor, limit or format with a 400 naming it", async () => {
    const { get } = await setup();
    for (const [query, error] of [
      ["?cursor=abc", /cursor: must be the nextCursor of a previous page/],
      ["?cursor=-3", /cursor: must be the nextCursor/],
      ["?limit=201", /limit/],
      ["?format=xml", /format: must be json, csv or jsonl/],
    ] as const) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect((await res.json()).error).toMatch(error);
    }
  });

  it("exports every row as CSV, escaped and formula-safe, and as JSON Lines", async () => {
    const { get } = await setup();
    const csv = await get("?format=csv");
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="actions-default.csv"');
    const text = await csv.text();
    expect(text.startsWith("id,createdAt,finishedAt,instanceId,kind,decidedBy,decider,operator,status,reason,")).toBe(true);
    expect(text).toContain(`,"'=HYPERLINK(""http://evil""), then\na new line",`);
    expect(text.split("\r\n").filter((l) => /^\d+,/.test(l))).toHaveLength(ROWS + 1);

    const jsonl = await get("?format=jsonl");
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const lines = (await jsonl.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(ROWS + 1);
    expect(lines.every((l) => l.instanceId.startsWith("sim-") && l.idempotencyKey.startsWith("k-default-"))).toBe(true);
  });

  it("defuses each formula lead and quotes only what needs it", () => {
    expect(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "plain", 'say "hi"', null].map(csvCell)).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@SUM(A1)",
      "'\tx",
      "plain",
      '"say ""hi"""',
      "",
    ]);
  });
});
