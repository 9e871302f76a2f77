/**
 * Plain text everywhere (issue #25): the same C0 rule on every stored text field. Table-driven
 * over the agents API (name, settings.model, instance filter label prefix and ids, Discord thread
 * name), an operator's instance action (label, note), the dashboard's agent form, and the LLM's
 * tool arguments (notification title and body, memory fact, wake reason): each is refused naming
 * the field (a tool call: an error result to the model) and nothing is stored.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { actions, agents, memory, notifications, wakes } from "../../schema/index.ts";
import { agentFixture, say } from "../support/agent-fixture.ts";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

const NUL = "\u0000";
const BEL = "\u0007";

const API_FIELDS: [string, string, string, Record<string, unknown>][] = [
  ["POST", "/api/agents", "name", { id: "team-b", name: `Team${NUL}B` }],
  ["POST", "/api/agents", "settings.model", { id: "team-b", settings: { model: `gpt${NUL}-4o` } }],
  [
    "POST",
    "/api/agents",
    "settings.instanceFilter.labelPrefix",
    { id: "team-b", settings: { instanceFilter: { labelPrefix: `b${BEL}-` } } },
  ],
  [
    "POST",
    "/api/agents",
    "settings.instanceFilter.ids.1",
    { id: "team-b", settings: { instanceFilter: { ids: ["sim-1", `sim${NUL}2`] } } },
  ],
  ["POST", "/api/agents", "settings.discordThreadName", { id: "team-b", settings: { discordThreadName: `alerts${NUL}` } }],
  ["PATCH", "/api/agents/default", "name", { name: `renamed${BEL}` }],
  ["POST", "/api/agents/default/instances/sim-1/actions", "label", { kind: "label", label: `x${NUL}y` }],
  ["POST", "/api/agents/default/instances/sim-1/actions", "note", { kind: "stop", note: `because${BEL}` }],
];

describe("plain text in the API", () => {
  it.each(API_FIELDS)("%s %s refuses a control character in %s, naming it, and writes nothing", async (method, path, field, body) => {
    const deps = await createTestDeps();
    const before = await deps.db.select().from(agents);
    const res = await buildApp(() => deps).request(path, { method, headers: authHeaders(), body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toContain(`${field}: must not contain control characters`);
    expect(await deps.db.select().from(agents)).toEqual(before);
    expect(await deps.db.select().from(actions)).toEqual([]);
  });
});

const llms: ScriptedLlm[] = [];
afterEach(async () => {
  await Promise.all(llms.splice(0).map((l) => l.close()));
});

const TOOL_FIELDS: [string, string, Record<string, unknown>][] = [
  ["notify_human", "title", { title: `sim-1${NUL} down`, body: "no heartbeat", severity: "warning" }],
  ["notify_human", "body", { title: "sim-1 down", body: `no${BEL} heartbeat`, severity: "warning" }],
  ["remember", "fact", { key: "owner", fact: `team${NUL}b` }],
  ["schedule_next_check", "reason", { in_seconds: 600, reason: `re-check${NUL}` }],
];

describe("plain text in tool arguments", () => {
  it.each(TOOL_FIELDS)("%s refuses a control character in %s: an error result naming it, nothing stored", async (tool, field, args) => {
    const llm = await new ScriptedLlm().start();
    llms.push(llm);
    const { deps } = await agentFixture({ llm });
    llm.push({ tools: [{ name: tool, arguments: args }] }, { text: "ok" });
    await say(deps, "go");
    const result = llm.requests[1]!.messages.find((m) => m.role === "tool")!;
    expect(JSON.parse(result.content!).error).toBe(
      `invalid arguments for ${tool}: ${field}: must not contain control characters (NUL or other C0 characters except tab and newline)`,
    );
    expect(await deps.db.select().from(notifications)).toEqual([]);
    expect(await deps.db.select().from(memory)).toEqual([]);
    expect(await deps.db.select().from(wakes).where(eq(wakes.agentId, "default"))).toEqual([]);
  });
});
