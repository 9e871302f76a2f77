/**
 * Per-agent settings take effect through `withAgent` at the entry points: the config an agent's
 * code reads, the model its LLM asks for, and ingest refused for an archived agent.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { OpenAiChatModel } from "../../agent/openai-model.ts";
import { buildApp } from "../../functions/app.ts";
import { needsApproval } from "../../fleet/actions.ts";
import { configForAgent } from "../../runtime/agent-settings.ts";
import { archiveAgent, createAgent } from "../../pipeline/index.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { createTestDeps, testConfig, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";

describe("agent settings", () => {
  it("override the environment's defaults and leave unset ones alone", () => {
    const env = testConfig({ OPENAI_API_KEY: "sk-x", AGENT_MODEL: "env-model", NTFY_URL: "https://ntfy.sh/env-topic" });
    const config = configForAgent(env, { model: "agent-model", contextBudgetTokens: 12000, approvalRequired: ["stop", "destroy"], maxPendingWakes: 3, channels: { slack: "https://hooks.slack.com/services/x" } });
    expect(config.llm!.model).toBe("agent-model");
    expect(config).toMatchObject({ contextBudgetTokens: 12000, approvalRequired: ["stop", "destroy"], maxPendingWakes: 3, debounceHumanMs: env.debounceHumanMs });
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
      headers: { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new Webhook(TEST_WEBHOOK_SECRET).sign("msg_1", at, raw), "content-type": "application/json" },
      body: raw,
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: "agent old is archived" });
    const { events } = await import("../../schema/index.ts");
    expect(await deps.db.select().from(events)).toHaveLength(0);
  });
});
