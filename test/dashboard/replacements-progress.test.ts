/**
 * The fleet page shows the replacements in progress (fleet/replacement/replacement-rows.ts listOpenReplacements):
 * each open one with its dead instance, its new one once rented and the stage it waits in; a done
 * or failed replacement is not listed there, and nothing is shown when none is open.
 */
import { describe, expect, it } from "vitest";
import { replacements } from "../../schema/index.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

describe("replacements on the fleet page", () => {
  it("lists the open ones with their stage, and not the finished ones", async () => {
    const deps = await createTestDeps({});
    const client = await dashboardClient(deps);
    expect((await client.page("/fleet")).html).not.toContain("Replacements in progress");

    const now = deps.clock.now();
    const row = { agentId: "default", reason: "offline for 2 h", decidedBy: "rules", createdAt: now, updatedAt: now };
    await deps.db.insert(replacements).values([
      { ...row, oldInstanceId: "sim-1", status: "waiting", marker: "fw-replace-1", newInstanceId: "sim-on-m1-9" },
      { ...row, oldInstanceId: "sim-2", status: "awaiting_approval", marker: "fw-replace-2" },
      { ...row, oldInstanceId: "sim-3", status: "done", marker: "fw-replace-3", newInstanceId: "sim-on-m2-7" },
    ]);
    const html = (await client.page("/fleet")).html;
    const panel = html.slice(
      html.indexOf("Replacements in progress"),
      html.indexOf("</section>", html.indexOf("Replacements in progress")),
    );
    expect(panel).toContain('href="/fleet/sim-1"');
    expect(panel).toContain('href="/fleet/sim-on-m1-9"');
    expect(panel).toContain("waiting for the new instance to run");
    expect(panel).toContain("waiting for a human&#39;s approval");
    expect(panel).not.toContain("sim-3");
  });
});
