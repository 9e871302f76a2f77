/**
 * IDLE_NOTIFY_AFTER_S per agent (`idleNotifyAfterS`), the setting added as one row of the settings
 * table: set through the agents API or the Agents form, bounded like the variable, in effect in the
 * agent's own Config (what the idle check reads), shown as the agent's on its page; other agents
 * keep the environment's value.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { createAgent } from "../../pipeline/index.ts";
import { WINDOW_MAX_S } from "../../runtime/setting-bounds.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

describe("idleNotifyAfterS per agent", () => {
  it("a PATCH through the agents API puts the agent's own idle-notify delay in effect, bounded like IDLE_NOTIFY_AFTER_S", async () => {
    const deps = await createTestDeps({ vars: { IDLE_NOTIFY_AFTER_S: "1800" } });
    await createAgent(deps.db, { id: "team-b", settings: {} }, deps.clock.now());
    const app = buildApp(() => deps);
    const patch = (settings: unknown) =>
      app.request("/api/agents/team-b", { method: "PATCH", headers: authHeaders(), body: JSON.stringify({ settings }) });

    const refused = await patch({ idleNotifyAfterS: WINDOW_MAX_S + 1 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toContain(`settings.idleNotifyAfterS: must be at most ${WINDOW_MAX_S}`);

    const res = await patch({ idleNotifyAfterS: 60 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { settings: unknown }).settings).toEqual({ idleNotifyAfterS: 60 });
    expect((await withAgent(deps, "team-b"))!.deps.config.economics.idleNotifyAfterMs).toBe(60_000);
    expect((await withAgent(deps, "default"))!.deps.config.economics.idleNotifyAfterMs).toBe(1_800_000);

    const client = await dashboardClient(deps);
    const page = (await client.page("/agents/team-b")).html;
    expect(page).toContain(
      '<tr data-setting="idleNotifyAfterS"><th scope="row">idleNotifyAfterS</th><td>60 s</td><td>this agent&#39;s setting</td></tr>',
    );
    expect(page).toMatch(/name="idleNotifyAfterS" value="60"/);
  });

  it("the Agents form sets it like the API", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const res = await client.post("/agents", {
      id: "team-c",
      name: "",
      approvalMode: "default",
      filterKind: "none",
      filterValue: "",
      idleNotifyAfterS: "120",
    });
    expect(res.status).toBe(201);
    expect((await withAgent(deps, "team-c"))!.deps.config.economics.idleNotifyAfterMs).toBe(120_000);
  });
});
