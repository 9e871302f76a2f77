/**
 * The agents API: create, list, read, update, archive and restore agents (never the last active
 * one); settings validated like
 * configuration (400 naming the field, nothing written), channel URLs never shown in full, and an
 * archived agent refusing new work (409) while its history stays readable. PATCH merges the
 * settings (JSON Merge Patch), and a channel URL sent back exactly as the API showed it (masked) keeps the
 * stored secret.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { listRuns } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { agents, operatorActivity } from "../../schema/index.ts";
import { LAST_ACTIVE_AGENT } from "../../jobs/agent-archive.ts";
import { authHeaders, createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";

async function setup() {
  const deps = await createTestDeps();
  const app = buildApp(() => deps);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, headers: authHeaders(), body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  return { deps, call };
}

/** An agent's settings as stored (secrets in full). */
const storedSettings = (deps: Awaited<ReturnType<typeof createTestDeps>>) => async (id: string) =>
  (await deps.db.select().from(agents).where(eq(agents.id, id)))[0]!.settings as Record<string, any>;

const SLACK = "https://hooks.slack.com/services/T000/B000/sEcReTtOkEn123";
const NTFY = "https://ntfy.example/alerts-s3cret";

describe("agents API", () => {
  it("creates an agent with settings, lists it, and shows its settings masked", async () => {
    const { call } = await setup();
    const created = await call("POST", "/api/agents", {
      id: "gpu-team-b",
      name: "Team B",
      settings: { contextBudgetTokens: 20000, debounceHumanMs: 500, channels: { slack: SLACK }, instanceFilter: { labelPrefix: "b-" } },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      id: "gpu-team-b",
      name: "Team B",
      archived: false,
      settings: { instanceFilter: { labelPrefix: "b-" } },
    });
    expect(created.json.settings.channels.slack).toBe("https://hooks.slack.com/…");

    const list = await call("GET", "/api/agents");
    expect(list.json.agents.map((a: { id: string }) => a.id)).toEqual(["default", "gpu-team-b"]);
    expect(JSON.stringify(list.json)).not.toContain("sEcReTtOkEn123");

    // Today's state fields, plus identity; the budget is the agent's own.
    const state = await call("GET", "/api/agents/gpu-team-b");
    expect(state.json).toMatchObject({ runCounter: 0, sessionEpoch: 1, contextBudget: 20000, name: "Team B", archived: false });
    expect(JSON.stringify(state.json)).not.toContain("sEcReTtOkEn123");
    expect((await call("GET", "/api/agents/default")).json).toMatchObject({ contextBudget: 30000, name: "default", settings: {} });
  });

  it("refuses bad settings naming the field, and writes nothing", async () => {
    const { call } = await setup();
    const cases: [unknown, string][] = [
      [{ id: "x1", settings: { contextBudgetTokens: -5 } }, "settings.contextBudgetTokens"],
      [{ id: "x1", settings: { approvalRequired: ["explode"] } }, "settings.approvalRequired.0"],
      [{ id: "x1", settings: { channels: { slack: "not a url" } } }, "settings.channels.slack"],
      [{ id: "x1", settings: { instanceFilter: { labelPrefix: "a", ids: ["1"] } } }, "settings.instanceFilter"],
      [{ id: "x1", settings: { debounceWindow: 5 } }, "debounceWindow"],
      [{ id: "bad id!" }, "id"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", "/api/agents", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toContain(field);
    }
    expect((await call("GET", "/api/agents")).json.agents).toHaveLength(1);
    expect((await call("PATCH", "/api/agents/default", { settings: { maxPendingWakes: 0 } })).json.error).toContain(
      "settings.maxPendingWakes",
    );
    expect((await call("GET", "/api/agents/default")).json.settings).toEqual({});
  });

  it("an id is taken once, even by an archived agent", async () => {
    const { call } = await setup();
    expect((await call("POST", "/api/agents", { id: "twice" })).status).toBe(201);
    expect((await call("DELETE", "/api/agents/twice")).status).toBe(200);
    const again = await call("POST", "/api/agents", { id: "twice" });
    expect(again).toMatchObject({ status: 409, json: { error: "agent twice already exists" } });
  });

  it("PATCH replaces settings and renames; the new settings take effect on the next request", async () => {
    const { deps, call } = await setup();
    const scheduler = deps.scheduler as RecordingScheduler;
    await call("POST", "/api/agents", { id: "quick" });
    const patched = await call("PATCH", "/api/agents/quick", { name: "Quick one", settings: { debounceHumanMs: 0 } });
    expect(patched.json).toMatchObject({ name: "Quick one", settings: { debounceHumanMs: 0 } });

    await call("POST", "/api/agents/quick/messages", { text: "now" });
    await call("POST", "/api/agents/default/messages", { text: "later" });
    const byAgent = Object.fromEntries(scheduler.published.map((p) => [p.body.agentId, p.notBefore - deps.clock.now()]));
    expect(byAgent).toEqual({ quick: 0, default: 2000 });
  });

  it("archiving stops ticks, runs and ingest, and keeps the history", async () => {
    const { deps, call } = await setup();
    const scheduler = deps.scheduler as RecordingScheduler;
    await call("POST", "/api/agents", { id: "retiring" });
    await call("POST", "/api/agents/retiring/messages", { text: "one last thing" });
    deps.clock.advance(2000);
    const [delivery] = scheduler.takeDue(deps.clock.now());
    expect(await handleDelivery(deps, delivery!.body)).toBe("succeeded");
    await call("POST", "/api/agents/retiring/messages", { text: "and another" });

    const archived = await call("DELETE", "/api/agents/retiring");
    expect(archived.json).toMatchObject({ id: "retiring", archived: true });

    // The run scheduled before archiving is acknowledged and does nothing.
    deps.clock.advance(2000);
    const pending = scheduler.takeDue(deps.clock.now());
    expect(pending.map((p) => p.body.type)).toEqual(["run"]);
    expect(await handleDelivery(deps, pending[0]!.body)).toBe("archived");
    expect(await handleDelivery(deps, { type: "tick", agentId: "retiring" })).toBe("archived");
    expect(await listRuns(deps, "retiring", 10)).toHaveLength(1);

    expect((await call("POST", "/api/agents/retiring/messages", { text: "hello?" })).status).toBe(409);
    expect((await call("POST", "/api/agents/retiring/trigger", {})).status).toBe(409);
    expect((await runCronTick(deps)).map((t) => t.agentId)).toEqual(["default"]);
    // History stays readable.
    expect((await call("GET", "/api/agents/retiring/runs")).json.runs).toHaveLength(1);
    expect((await call("GET", "/api/agents/retiring")).json).toMatchObject({ archived: true, runCounter: 1 });
  });

  it("refuses to archive the last active agent (409 naming why), and restores an archived one, audited once", async () => {
    const { deps, call } = await setup();
    const last = await call("DELETE", "/api/agents/default");
    expect(last.status).toBe(409);
    expect(last.json.error).toBe(`agent default was not archived: ${LAST_ACTIVE_AGENT}`);
    expect((await call("GET", "/api/agents/default")).json.archived).toBe(false);

    await call("POST", "/api/agents", { id: "spare" });
    expect((await call("DELETE", "/api/agents/default")).json).toMatchObject({ archived: true });
    // Now spare is the last active one.
    expect((await call("DELETE", "/api/agents/spare")).status).toBe(409);
    expect((await call("POST", "/api/agents/default/trigger", {})).status).toBe(409);

    const restored = await call("POST", "/api/agents/default/restore");
    expect(restored.status).toBe(200);
    expect(restored.json).toMatchObject({ id: "default", archived: false, archivedAt: null });
    expect((await call("POST", "/api/agents/default/restore")).json).toMatchObject({ archived: false });
    expect((await call("POST", "/api/agents/default/trigger", {})).status).not.toBe(409);
    expect((await runCronTick(deps)).map((t) => t.agentId).sort()).toEqual(["default", "spare"]);
    const audit = await deps.db.select().from(operatorActivity);
    expect(audit.filter((r) => r.agentId === "default" && r.action.startsWith("agent_")).map((r) => r.action)).toEqual([
      "agent_archive",
      "agent_restore",
    ]);
    expect((await call("POST", "/api/agents/nobody/restore")).status).toBe(404);
  });
});

describe("PATCH with masked secrets", () => {
  it("sending back what GET showed changes the rest and keeps the stored channel URLs", async () => {
    const { deps, call } = await setup();
    const stored = storedSettings(deps);
    await call("POST", "/api/agents", { id: "team-b", settings: { channels: { slack: SLACK, ntfy: NTFY }, debounceHumanMs: 500 } });
    const shown = (await call("GET", "/api/agents/team-b")).json;
    expect(shown.settings.channels).toEqual({ slack: "https://hooks.slack.com/…", ntfy: "https://ntfy.example/…" });
    const patched = await call("PATCH", "/api/agents/team-b", { settings: { ...shown.settings, debounceHumanMs: 900 } });
    expect(patched.status).toBe(200);
    expect(await stored("team-b")).toEqual({ channels: { slack: SLACK, ntfy: NTFY }, debounceHumanMs: 900 });
  });

  it("a new URL replaces the stored one, a channel left out is kept, and a channel sent as null is removed", async () => {
    const { deps, call } = await setup();
    const stored = storedSettings(deps);
    await call("POST", "/api/agents", { id: "team-b", settings: { channels: { slack: SLACK, ntfy: NTFY } } });
    const fresh = "https://hooks.slack.com/services/T000/B000/n3wT0ken";
    await call("PATCH", "/api/agents/team-b", { settings: { channels: { slack: fresh } } });
    expect(await stored("team-b")).toEqual({ channels: { slack: fresh, ntfy: NTFY } });
    await call("PATCH", "/api/agents/team-b", { settings: { channels: { ntfy: null } } });
    expect(await stored("team-b")).toEqual({ channels: { slack: fresh } });
  });

  it("the mask of a different URL is not taken for the stored secret", async () => {
    const { deps, call } = await setup();
    const stored = storedSettings(deps);
    await call("POST", "/api/agents", { id: "team-b", settings: { channels: { slack: SLACK } } });
    await call("PATCH", "/api/agents/team-b", { settings: { channels: { slack: "https://other.example/…" } } });
    expect((await stored("team-b")).channels.slack).not.toBe(SLACK);
  });
});
