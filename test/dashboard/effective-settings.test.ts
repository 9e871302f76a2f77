/**
 * Effective settings on the Agents pages (issue #24 item 6): each setting's value and where it
 * comes from — the agent's own setting or the environment's default, naming the variable — so a
 * channel configured only in the environment shows as configured, masked, "from environment",
 * and an agent's own channel or mode shows as its setting. The secret parts of a URL never appear.
 */
import { describe, expect, it } from "vitest";
import { createAgent } from "../../pipeline/index.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

const ENV_SLACK = "https://hooks.slack.com/services/T000/B000/envSecret123";
const OWN_NTFY = "https://ntfy.example.net/ownSecretTopic";

/** The rows of the effective-settings table: setting → [value, from]. */
function rows(html: string): Record<string, [string, string]> {
  const table = html.match(/<table data-testid="effective-settings">[\s\S]*?<\/table>/)?.[0] ?? "";
  return Object.fromEntries(
    [...table.matchAll(/<tr data-setting="([^"]+)"><th scope="row">[^<]*<\/th><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((m) => [
      m[1]!,
      [m[2]!, m[3]!.replaceAll("&#39;", "'")],
    ]),
  );
}

describe("effective settings", () => {
  it("shows each value with its source; an environment channel is masked and from the environment", async () => {
    const deps = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: ENV_SLACK, DEBOUNCE_HUMAN_MS: "1500" } });
    await createAgent(deps.db, { id: "team-b", settings: { mode: "shadow", channels: { ntfy: OWN_NTFY } } }, deps.clock.now());
    const client = await dashboardClient(deps);

    const own = await client.page("/agents/team-b");
    const b = rows(own.html);
    expect(b.mode).toEqual(["shadow", "this agent's setting"]);
    expect(b["channels.ntfy"]).toEqual(["https://ntfy.example.net/…", "this agent's setting"]);
    expect(b["channels.slack"]).toEqual(["https://hooks.slack.com/…", "from environment (SLACK_WEBHOOK_URL)"]);
    expect(b["channels.discord"]).toEqual(["not configured", "from environment (DISCORD_WEBHOOK_URL)"]);
    expect(b.debounceHumanMs).toEqual(["1500 ms", "from environment (DEBOUNCE_HUMAN_MS)"]);
    expect(b.approvalRequired).toEqual(["destroy, replace", "from environment (APPROVAL_REQUIRED_ACTIONS)"]);
    expect(own.html).not.toContain("envSecret123");
    expect(own.html).not.toContain("ownSecretTopic");

    // The list shows the environment's defaults; the default agent's page, the same values as its own.
    const list = rows((await client.page("/agents")).html);
    expect(list.mode).toEqual(["act", "from environment (AGENT_MODE)"]);
    expect(list["channels.slack"]).toEqual(["https://hooks.slack.com/…", "from environment (SLACK_WEBHOOK_URL)"]);
    // Selecting team-b as the page's agent does not make its settings look like the environment's.
    expect(rows((await client.page("/agents?agent=team-b")).html).mode).toEqual(["act", "from environment (AGENT_MODE)"]);
  });
});
