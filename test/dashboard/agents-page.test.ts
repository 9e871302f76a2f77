/**
 * The agents page: every role sees the agents with their waiting approvals, attention counts and
 * instance filters; admins create agents, change settings and archive through forms that go
 * through the agents API's validation (bad input re-renders the form naming the problem, nothing
 * written). Channel URLs are shown masked, and saving without retyping one keeps the secret.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createOperator } from "../../auth/operators-store.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { agents, operatorActivity } from "../../schema/index.ts";
import { createAgent } from "../../pipeline/index.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

const SLACK = "https://hooks.slack.com/services/T000/B000/sEcReTtOkEn123";

/** Every field of the form, as a browser posts it with nothing filled in. */
const BLANK = {
  id: "",
  name: "",
  model: "",
  contextBudgetTokens: "",
  debounceHumanMs: "",
  debounceStateMs: "",
  maxPendingWakes: "",
  approvalMode: "default",
  slack: "",
  discord: "",
  ntfy: "",
  filterKind: "none",
  filterValue: "",
};

const storedAgent = async (deps: TestDeps, id: string) => (await deps.db.select().from(agents).where(eq(agents.id, id)))[0];

/** A form's current values, read from the page as a browser would submit them unchanged. */
function formValues(html: string, action: string): Record<string, string> {
  const form = html.match(new RegExp(`<form method="post" action="${action}"[\\s\\S]*?</form>`))![0];
  const values: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="text" id="[^"]+" name="([^"]+)" value="([^"]*)"/g))
    values[m[1]!] = m[2]!.replaceAll("&amp;", "&");
  for (const m of form.matchAll(/<select id="[^"]+" name="([^"]+)">([\s\S]*?)<\/select>/g))
    values[m[1]!] = m[2]!.match(/<option value="(\w+)" selected="">/)![1]!;
  return values;
}

describe("agents page", () => {
  it("lists each agent with its waiting approvals, attention count and instance filter, for every role; only admins get forms", async () => {
    const deps = await createTestDeps();
    await createAgent(deps.db, { id: "team-b", name: "Team B", settings: { instanceFilter: { labelPrefix: "b-" } } }, deps.clock.now());
    await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-1",
      reason: "idle",
    });
    for (const role of ["viewer", "operator", "admin"] as const) {
      const { token } = await createOperator(deps.db, { name: `${role}-1`, role, createdBy: "admin", now: deps.clock.now() });
      const client = await dashboardClient(deps, token);
      const { status, html } = await client.page("/agents");
      expect(status, role).toBe(200);
      expect(html).toMatch(
        /<tr data-agent="default"><td><a href="\/agents\/default">default<\/a>[\s\S]*?<td>1<\/td><td>1<\/td><td>every instance of the provider account<\/td><\/tr>/,
      );
      expect(html).toMatch(
        /<tr data-agent="team-b"><td><a href="\/agents\/team-b">Team B \(team-b\)<\/a>[\s\S]*?<td>0<\/td><td>0<\/td><td>labels starting with “b-”<\/td><\/tr>/,
      );
      expect(html.includes('<form method="post" action="/agents"'), role).toBe(role === "admin");
      expect((await client.page("/agents/team-b")).html.includes('<form method="post" action="/agents/team-b"'), role).toBe(
        role === "admin",
      );
    }
  });

  it("an admin creates an agent from the form: the same settings the API would store, then its page", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const res = await client.post("/agents", {
      ...BLANK,
      id: "team-c",
      name: "Team C",
      model: "small-model",
      debounceHumanMs: "500",
      maxPendingWakes: "3",
      approvalMode: "custom",
      approvalRequired: "destroy",
      slack: SLACK,
      filterKind: "ids",
      filterValue: "sim-1, sim-2",
    });
    // The new agent's page is the answer, showing its webhook secret this once (not a redirect).
    expect(res.status).toBe(201);
    const created = await res.text();
    const row = await storedAgent(deps, "team-c");
    expect(row!.webhookSecret).toMatch(/^whsec_/);
    expect(created).toContain(row!.webhookSecret!);
    expect((await client.page("/agents/team-c")).html).not.toContain(row!.webhookSecret!);
    expect(row!.name).toBe("Team C");
    expect(row!.settings).toEqual({
      model: "small-model",
      debounceHumanMs: 500,
      maxPendingWakes: 3,
      approvalRequired: ["destroy"],
      channels: { slack: SLACK },
      instanceFilter: { ids: ["sim-1", "sim-2"] },
    });
    expect(await deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "agent_create"))).toHaveLength(1);
    const page = await client.page("/agents/team-c?done=agent-created");
    expect(page.html).toContain("Agent created");
    expect(page.html).toContain("https://hooks.slack.com/…");
    expect(page.html).not.toContain("sEcReTtOkEn123");
  });

  it("bad input re-renders the form with the problem named (400), keeps what was typed, and writes nothing", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const cases: [Record<string, string>, string][] = [
      [{ id: "bad id!" }, "id: must be 1-64 letters, digits, - or _"],
      [{ id: "team-d", debounceHumanMs: "soon" }, "settings.debounceHumanMs"],
      [{ id: "team-d", debounceStateMs: "-5" }, "settings.debounceStateMs"],
      [{ id: "team-d", slack: "not a url" }, "settings.channels.slack"],
      [{ id: "team-d", filterKind: "ids", filterValue: "" }, "settings.instanceFilter.ids: must list at least one id"],
      [{ id: "team-d", approvalMode: "custom", approvalRequired: "launch" }, "settings.approvalRequired.0"],
    ];
    for (const [fields, named] of cases) {
      const res = await client.post("/agents", { ...BLANK, ...fields });
      expect(res.status, named).toBe(400);
      const html = await res.text();
      expect(html).toMatch(new RegExp(`data-testid="agent-form-error">Not created: [^<]*${named.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      expect(html).toContain(`name="id" value="${fields.id}"`);
    }
    expect((await deps.db.select().from(agents)).map((a) => a.id)).toEqual(["default"]);
    const taken = await client.post("/agents", { ...BLANK, id: "default" });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain("Not created: agent default already exists.");
  });

  it("editing shows channel URLs masked; saving without retyping keeps the stored secret, other changes apply", async () => {
    const deps = await createTestDeps();
    await createAgent(deps.db, { id: "team-b", settings: { channels: { slack: SLACK }, debounceHumanMs: 500 } }, deps.clock.now());
    const client = await dashboardClient(deps);
    const page = await client.page("/agents/team-b");
    expect(page.html).not.toContain("sEcReTtOkEn123");
    const values = formValues(page.html, "/agents/team-b");
    expect(values.slack).toBe("https://hooks.slack.com/…");
    const res = await client.post("/agents/team-b", { ...values, name: "Team B", debounceHumanMs: "900" });
    expect(res.headers.get("location")).toBe("/agents/team-b?done=agent-saved");
    const row = await storedAgent(deps, "team-b");
    expect(row!.settings).toEqual({ channels: { slack: SLACK }, debounceHumanMs: 900 });
    expect(row!.name).toBe("Team B");
    // A bad change names the problem and leaves the stored settings as they were.
    const bad = await client.post("/agents/team-b", { ...values, maxPendingWakes: "0" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Not saved: settings.maxPendingWakes");
    expect((await storedAgent(deps, "team-b"))!.settings).toEqual(row!.settings);
    // Clearing the field removes the channel.
    await client.post("/agents/team-b", { ...values, slack: "" });
    expect((await storedAgent(deps, "team-b"))!.settings).toEqual({ debounceHumanMs: 500 });
  });

  it("archiving needs the confirmation box, then keeps the agent listed as archived", async () => {
    const deps = await createTestDeps();
    await createAgent(deps.db, { id: "team-b", settings: {} }, deps.clock.now());
    const client = await dashboardClient(deps);
    const unconfirmed = await client.post("/agents/team-b/archive", {});
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.text()).toContain("Not archived: tick the box to confirm.");
    expect((await storedAgent(deps, "team-b"))!.archivedAt).toBeNull();
    const res = await client.post("/agents/team-b/archive", { confirm: "yes" });
    expect(res.headers.get("location")).toBe("/agents/team-b?done=agent-archived");
    expect((await storedAgent(deps, "team-b"))!.archivedAt).toBe(deps.clock.now());
    expect((await client.page("/agents")).html).toMatch(/<tr data-agent="team-b">[\s\S]*?archived \d{4}-/);
    expect((await client.page("/agents/team-b")).html).not.toContain('action="/agents/team-b/archive"');
    expect((await client.page("/agents/team-b")).html).toContain('action="/agents/team-b/restore"');
    const restored = await client.post("/agents/team-b/restore", {});
    expect(restored.headers.get("location")).toBe("/agents/team-b?done=agent-restored");
    expect((await storedAgent(deps, "team-b"))!.archivedAt).toBeNull();
    expect((await client.page("/agents/team-b")).html).toContain('action="/agents/team-b/archive"');
  });

  it("refuses to archive the last active agent, saying why, and archives nothing", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const res = await client.post("/agents/default/archive", { confirm: "yes" });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("it is the last active agent");
    expect((await storedAgent(deps, "default"))!.archivedAt).toBeNull();
  });

  it("an unknown agent's page and posts are 404 and write nothing", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    expect((await client.page("/agents/nobody")).status).toBe(404);
    expect((await client.post("/agents/nobody", { ...BLANK, debounceHumanMs: "5" })).status).toBe(404);
    expect((await client.post("/agents/nobody/archive", { confirm: "yes" })).status).toBe(404);
    expect((await deps.db.select().from(agents)).map((a) => a.id)).toEqual(["default"]);
  });
});
