/**
 * Per-agent settings take effect through `withAgent` at the entry points: the config an agent's
 * code reads, the model its LLM asks for, and ingest refused for an archived agent.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { OpenAiChatModel } from "../../agent/llm/openai-model.ts";
import { buildApp } from "../../functions/app.ts";
import { needsApproval } from "../../fleet/actions/actions.ts";
import { configForAgent } from "../../runtime/agent-settings.ts";
import {
  DEBOUNCE_MAX_MS,
  IDLE_STOP_AFTER_MAX_S,
  MAX_PENDING_WAKES_MAX,
  SPEND_LIMIT_PER_DAY_MAX_USD,
} from "../../runtime/setting-bounds.ts";
import { minimumContextBudget } from "../../jobs/context-budget.ts";
import { newAgentFromForm } from "../../dashboard/agents/agent-form.ts";
import { agents } from "../../schema/index.ts";
import { archiveAgent, createAgent } from "../../pipeline/index.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { authHeaders, createTestDeps, testConfig, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";

describe("agent settings", () => {
  it("override the environment's defaults and leave unset ones alone", () => {
    const env = testConfig({ OPENAI_API_KEY: "sk-x", AGENT_MODEL: "env-model", NTFY_URL: "https://ntfy.sh/env-topic" });
    const config = configForAgent(env, {
      model: "agent-model",
      contextBudgetTokens: 12000,
      approvalRequired: ["stop", "destroy"],
      maxPendingWakes: 3,
      channels: { slack: "https://hooks.slack.com/services/x" },
    });
    expect(config.llm!.model).toBe("agent-model");
    expect(config).toMatchObject({
      contextBudgetTokens: 12000,
      approvalRequired: ["stop", "destroy"],
      maxPendingWakes: 3,
      debounceHumanMs: env.debounceHumanMs,
    });
    expect(config.channels).toEqual({ slack: "https://hooks.slack.com/services/x", discord: undefined, ntfy: "https://ntfy.sh/env-topic" });
    expect(needsApproval({ config }, { kind: "stop", decidedBy: "llm" })).toBe(true);
    expect(needsApproval({ config: env }, { kind: "stop", decidedBy: "llm" })).toBe(false);
    expect(configForAgent(env, {})).toEqual(env);
  });

  it("withAgent gives the agent's deps its model", async () => {
    const config = testConfig({ OPENAI_API_KEY: "sk-x", AGENT_MODEL: "env-model" });
    const deps = await createTestDeps({ config, llm: new OpenAiChatModel(config.llm!) });
    await createAgent(deps.db, { id: "small", settings: { model: "tiny-model" } }, deps.clock.now());
    expect((await withAgent(deps, "small"))!.deps.llm!.model).toBe("tiny-model");
    expect((await withAgent(deps, "default"))!.deps.llm!.model).toBe("env-model");
    expect(await withAgent(deps, "nobody")).toBeNull();
  });

  it("an instance webhook for an archived agent is refused with 409 and writes nothing", async () => {
    const deps = await createTestDeps();
    await createAgent(deps.db, { id: "old", settings: {} }, deps.clock.now());
    await archiveAgent(deps.db, "old", deps.clock.now());
    const app = buildApp(() => deps);
    const raw = JSON.stringify({ instanceId: "sim-1", state: "exited" });
    const at = new Date(); // the signature tolerance is checked against real time
    const res = await app.request("/webhooks/old/instances", {
      method: "POST",
      headers: {
        "webhook-id": "msg_1",
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(TEST_WEBHOOK_SECRET).sign("msg_1", at, raw),
        "content-type": "application/json",
      },
      body: raw,
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: "agent old is archived" });
    const { events } = await import("../../schema/index.ts");
    expect(await deps.db.select().from(events)).toHaveLength(0);
  });

  it("refuses a per-agent setting past its environment counterpart's bounds with a 400 naming it, and writes nothing", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const call = async (method: string, path: string, body: unknown) => {
      const res = await app.request(path, { method, headers: authHeaders(), body: JSON.stringify(body) });
      return { status: res.status, error: ((await res.json()) as { error?: string }).error ?? "" };
    };
    const { minimum } = minimumContextBudget();
    const cases: [Record<string, unknown>, string][] = [
      [{ contextBudgetTokens: 100 }, `settings.contextBudgetTokens: is 100; the minimum is ${minimum}`],
      [{ contextBudgetTokens: minimum - 1 }, "settings.contextBudgetTokens: is"],
      [{ debounceHumanMs: DEBOUNCE_MAX_MS + 1 }, `settings.debounceHumanMs: must be at most ${DEBOUNCE_MAX_MS}`],
      [{ debounceStateMs: 1.5 }, "settings.debounceStateMs: must be a whole number"],
      [{ maxPendingWakes: MAX_PENDING_WAKES_MAX + 1 }, "settings.maxPendingWakes: must be at most"],
      [{ idleStopAfterS: IDLE_STOP_AFTER_MAX_S + 1 }, "settings.idleStopAfterS: must be at most"],
      [{ spendLimitPerDayUsd: SPEND_LIMIT_PER_DAY_MAX_USD + 1 }, "settings.spendLimitPerDayUsd: must be at most"],
      [{ model: "   " }, "settings.model: must not be empty"],
      [{ channels: { slack: "javascript:alert(1)" } }, "settings.channels.slack: must be an http:// or https:// URL (got javascript:)"],
      [{ channels: { ntfy: "file:///etc/passwd" } }, "settings.channels.ntfy: must be an http:// or https:// URL"],
    ];
    for (const [settings, message] of cases) {
      const created = await call("POST", "/api/agents", { id: "bounded", settings });
      expect(created.status, JSON.stringify(settings)).toBe(400);
      expect(created.error).toContain(message);
      const patched = await call("PATCH", "/api/agents/default", { settings });
      expect(patched.status, JSON.stringify(settings)).toBe(400);
      expect(patched.error).toContain(message);
    }
    const rows = await deps.db.select().from(agents);
    expect(rows.map((r) => r.id)).toEqual(["default"]);
    expect(rows[0]!.settings ?? {}).toEqual({});
    expect((await call("POST", "/api/agents", { id: "at-minimum", settings: { contextBudgetTokens: minimum } })).status).toBe(201);
  });

  it("the dashboard form refuses a context budget below the minimum like the API", () => {
    const blank = {
      id: "f1",
      name: "",
      model: "",
      contextBudgetTokens: "100",
      debounceHumanMs: "",
      debounceStateMs: "",
      maxPendingWakes: "",
      approvalMode: "default" as const,
      approvalRequired: [],
      slack: "",
      discord: "",
      ntfy: "",
      filterKind: "none" as const,
      filterValue: "",
    };
    const result = newAgentFromForm(blank);
    expect(result).toMatchObject({ ok: false });
    expect(!result.ok && result.error).toContain(`settings.contextBudgetTokens: is 100; the minimum is ${minimumContextBudget().minimum}`);
    expect(newAgentFromForm({ ...blank, contextBudgetTokens: String(minimumContextBudget().minimum) }).ok).toBe(true);
  });
});
