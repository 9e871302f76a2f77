/**
 * Attack: text an attacker controls (an action's reason written by a hijacked model, an error from
 * a provider) carries a formula after a `;`: `stopped;=HYPERLINK("http://evil")`. The audit export
 * only defused a cell's first character, so a spreadsheet that splits the CSV on `;` (the default
 * separator where `,` is the decimal mark) gets a cell that starts with `=` and runs it.
 * Guard: jobs/actions-audit.ts csvCell defuses a formula lead (= + - @ tab CR, OWASP's CSV
 * injection list) at the start of the cell and after every `;` or `,` separator, with a `'`, and
 * quotes any cell holding a separator; however a reader splits the line, no piece starts a formula.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { actions } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

const FORMULA_LEAD = /^\s*"?\s*[=+\-@\t\r]/;

describe("a formula after a ; in the audit export", () => {
  it("no piece of the CSV starts a formula, whether split on , or ;", async () => {
    const deps = await createTestDeps();
    const now = deps.clock.now();
    const reasons = ['stopped;=HYPERLINK("http://evil")', "ok; +cmd|' /C calc'!A0", "a,@SUM(1)", "x;\t-1", "plain; text"];
    await deps.db.insert(actions).values(
      reasons.map((reason, i) => ({
        agentId: "default",
        runId: null,
        instanceId: `sim-${i}`,
        kind: "stop",
        decidedBy: "rules",
        idempotencyKey: `csv-${i}`,
        status: "succeeded",
        reason,
        createdAt: now + i,
      })),
    );
    const res = await buildApp(() => deps).request("/api/agents/default/actions?format=csv", { headers: authHeaders() });
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const separator of [";", ","]) {
      const pieces = text.split(/\r\n/).flatMap((line) => line.split(separator));
      expect(pieces.filter((p) => FORMULA_LEAD.test(p))).toEqual([]);
    }
    expect(text).toContain("plain; text");
  });
});
