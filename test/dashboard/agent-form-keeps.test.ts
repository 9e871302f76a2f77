/**
 * The Agents page's form edits only the settings it has fields for: saving it keeps every other
 * stored setting (the provider account and its key, the mode, the replacement and idle-stop
 * delays, the spend limit, the Discord thread name), so a save never moves an agent back to the
 * deployment's own provider account or undoes a pause.
 */
import { describe, expect, it } from "vitest";
import { agentChangeFromForm, agentFormFields } from "../../dashboard/agents/agent-form.ts";
import type { AgentSettings } from "../../runtime/agent-settings.ts";

describe("saving the agent form", () => {
  it("keeps the settings it has no field for, and changes the ones it has", () => {
    const stored: AgentSettings = {
      model: "gpt-4o-mini",
      provider: { kind: "runpod", apiKey: "rp_secret_key_1234" },
      mode: "shadow",
      replaceAfterS: 600,
      idleStopAfterS: 3600,
      spendLimitPerDayUsd: 40,
      discordThreadName: "alerts",
    };
    const saved = agentChangeFromForm({ ...agentFormFields({ id: "team-b", name: null, settings: stored }), model: "gpt-4o" }, stored);
    expect(saved.ok).toBe(true);
    if (!saved.ok) return;
    expect(saved.value.settings).toMatchObject({ ...stored, model: "gpt-4o" });
  });
});
