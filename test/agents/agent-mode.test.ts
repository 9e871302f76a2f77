/**
 * Shadow mode as the pause switch: POST /api/agents/:agent/mode (operator) switches an agent to
 * shadow or back, GET answers it, each switch (and a PATCH of settings.mode that changes it) is
 * in operator_activity with the operator's name, bad input is a 400 naming the problem with
 * nothing written, and the switched agent's runs see the new mode at once.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { agents, operatorActivity } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function setup(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars });
  const app = buildApp(() => deps);
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = authHeaders()) => {
    const res = await app.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const modeActivity = () =>
    deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "mode")).orderBy(operatorActivity.id);
  return { deps, call, modeActivity };
}

describe("POST /api/agents/:agent/mode", () => {
  it("switches to shadow and back, audited with the operator's name, and the agent's runs see it", async () => {
    const { deps, call, modeActivity } = await setup();
    const { token } = await createOperator(deps.db, { name: "dana", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const dana = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    expect((await call("GET", "/api/agents/default/mode")).json).toEqual({ agentId: "default", mode: "act" });

    const paused = await call("POST", "/api/agents/default/mode", { mode: "shadow" }, dana);
    expect(paused).toEqual({ status: 200, json: { agentId: "default", mode: "shadow", previous: "act" } });
    expect((await call("GET", "/api/agents/default/mode")).json.mode).toBe("shadow");
    expect((await withAgent(deps, "default"))!.deps.config.mode).toBe("shadow");

    expect((await call("POST", "/api/agents/default/mode", { mode: "act" })).json).toMatchObject({ mode: "act", previous: "shadow" });
    expect((await withAgent(deps, "default"))!.deps.config.mode).toBe("act");
    expect((await modeActivity()).map((a) => [a.operatorName, a.agentId, a.subject])).toEqual([
      ["dana", "default", "shadow"],
      ["admin", "default", "act"],
    ]);
  });

  it("refuses a bad mode with a 400 naming it, a viewer with a 403, and an unknown agent with a 404, writing nothing", async () => {
    const { deps, call, modeActivity } = await setup();
    const bad = await call("POST", "/api/agents/default/mode", { mode: "off" });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/mode/);
    expect((await call("POST", "/api/agents/default/mode", { mode: "shadow", extra: 1 })).status).toBe(400);
    const { token } = await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now: deps.clock.now() });
    expect(
      (
        await call(
          "POST",
          "/api/agents/default/mode",
          { mode: "shadow" },
          { authorization: `Bearer ${token}`, "content-type": "application/json" },
        )
      ).status,
    ).toBe(403);
    expect((await call("POST", "/api/agents/nobody/mode", { mode: "shadow" })).status).toBe(404);
    expect(await modeActivity()).toEqual([]);
    const [row] = await deps.db.select().from(agents).where(eq(agents.id, "default"));
    expect((row!.settings as Record<string, unknown>).mode).toBeUndefined();
  });

  it("a PATCH of settings.mode through the agents API is audited as a switch; one that keeps the mode is not", async () => {
    const { call, modeActivity } = await setup({ AGENT_MODE: "shadow" });
    expect((await call("GET", "/api/agents/default/mode")).json.mode).toBe("shadow");
    expect((await call("PATCH", "/api/agents/default", { settings: { contextBudgetTokens: 20000 } })).status).toBe(200);
    expect(await modeActivity()).toEqual([]);
    expect((await call("PATCH", "/api/agents/default", { settings: { mode: "act" } })).status).toBe(200);
    expect((await modeActivity()).map((a) => a.subject)).toEqual(["act"]);
    expect((await call("GET", "/api/agents/default/mode")).json.mode).toBe("act");
  });
});
