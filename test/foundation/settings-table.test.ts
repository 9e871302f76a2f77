/**
 * The settings table's own rules (issue #32 item 3): names and per-agent keys are unique, every
 * row says what it is (a doc; a default or explicitly optional), every per-agent key is validated
 * by the agents API and known to the Agents form (a field there, or kept as stored by a save),
 * and each variable lands in Config where its row says.
 */
import { describe, expect, it } from "vitest";
import { agentChangeFromForm } from "../../dashboard/agents/agent-form.ts";
import { fieldName, FORM_ROWS } from "../../dashboard/agents/form-rows.ts";
import { patchAgentBody } from "../../jobs/agent-admin-requests.ts";
import { parseConfig } from "../../runtime/config.ts";
import { AGENT_ROWS, ENV_ROWS, getPath, ROWS, setPath } from "../../runtime/settings/table.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";

const duplicates = (names: string[]) => names.filter((name, i) => names.indexOf(name) !== i);

describe("the settings table", () => {
  it("has no duplicate variable names, per-agent keys or form field names", () => {
    expect(ROWS.length).toBeGreaterThan(80);
    expect(duplicates(ROWS.map((row) => row.name))).toEqual([]);
    expect(duplicates(AGENT_ROWS.map((row) => row.agent.key))).toEqual([]);
    expect(duplicates(FORM_ROWS.map(fieldName))).toEqual([]);
  });

  it("gives every row a doc, and a default or an explicitly optional value", () => {
    for (const row of ROWS) {
      expect(row.doc.trim().length, row.name).toBeGreaterThan(5);
      expect(row.schema.safeParse(undefined).success, `${row.name} has neither a default nor .optional()`).toBe(true);
      if (row.agent) expect(row.at !== undefined || row.agent.fold === false, `${row.name} folds over Config but lands nowhere`).toBe(true);
    }
  });

  it("has the agents API validate every per-agent key (a bad value is refused at that key's path)", () => {
    for (const row of AGENT_ROWS) {
      const parsed = patchAgentBody.safeParse({ settings: setPath({}, row.agent.key, true) });
      expect(parsed.success, row.agent.key).toBe(false);
      const paths = parsed.error!.issues.map((issue) => issue.path.join("."));
      expect(paths, row.agent.key).toContain(`settings.${row.agent.key}`);
    }
  });

  it("has the Agents form show a field for every per-agent key with one, and keep every other as stored", async () => {
    const deps = await createTestDeps();
    const html = (await (await dashboardClient(deps)).page("/agents")).html;
    for (const row of FORM_ROWS) {
      const input = row.agent.field.input;
      const name = input === "actions" ? "approvalRequired" : input === "instanceFilter" ? "filterKind" : fieldName(row);
      expect(html, row.agent.key).toContain(`name="${name}"`);
    }
    const apiOnly = AGENT_ROWS.filter((row) => !row.agent.field);
    expect(apiOnly.length).toBeGreaterThan(0);
    for (const row of apiOnly) {
      const stored = setPath({}, row.agent.key, `kept-${row.agent.key}`);
      const blank = {
        id: "a",
        name: "",
        approvalMode: "default" as const,
        approvalRequired: [],
        filterKind: "none" as const,
        filterValue: "",
      };
      const saved = agentChangeFromForm(blank, stored as never);
      expect(saved.ok && getPath(saved.value.settings, row.agent.key), row.agent.key).toBe(`kept-${row.agent.key}`);
    }
  });

  it("lands each numeric variable in Config where its row says (after its conversion)", () => {
    let checked = 0;
    for (const row of ENV_ROWS) {
      const fallback = row.schema.safeParse(undefined);
      if (!row.at || !fallback.success || typeof fallback.data !== "number") continue;
      const value = fallback.data === 1 ? 2 : 1;
      const landed = row.to ? row.to(value) : value;
      if (["llm", "provider", "scheduler", "databaseUrl"].includes(row.at.split(".")[0]!)) continue;
      expect(getPath(parseConfig({ [row.name]: String(value) }, "node"), row.at), row.name).toBe(landed);
      checked++;
    }
    expect(checked).toBeGreaterThan(40);
  });
});
