/**
 * The overview's first steps (issue #38, item 5), on the rendered overview of a real app over real
 * libSQL: a fresh simulated install is told to connect a provider, install the reporter and add
 * Slack, each linking to its quick start; each step goes once its fact is true (a real provider;
 * an instance reporting by webhook, not the simulator's own heartbeat; a Slack, Discord or ntfy
 * channel), and the box goes once all are.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { instances } from "../../schema/index.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";
import { DOCS_URL } from "../../dashboard/overview/first-steps.tsx";

/** The steps the overview shows, in order ([] when the box is absent). */
async function shownSteps(deps: TestDeps): Promise<string[]> {
  const { status, html } = await (await dashboardClient(deps)).page("/");
  expect(status).toBe(200);
  const box = html.match(/<section class="first-steps"[\s\S]*?<\/section>/)?.[0];
  if (!box) return [];
  return [...box.matchAll(/<li data-step="([a-z]+)">/g)].map((m) => m[1]!);
}

let report = 0;
const webhookReport = (deps: TestDeps, instanceId: string) =>
  recordInstanceState(deps, {
    agentId: "default",
    instanceId,
    state: "running",
    source: "webhook",
    dedupKey: `first-steps-${++report}`,
    details: {},
  });

/** A real provider (its API is never called to render the overview). */
const vast = () => new VastProvider({ apiKey: "vast-key", baseUrl: "http://127.0.0.1:9", sleep: async () => {} });

describe("the overview's first steps", () => {
  it("on a fresh simulated install: all three, each linking to its quick start", async () => {
    const deps = await createTestDeps();
    expect(await shownSteps(deps)).toEqual(["provider", "reporter", "channel"]);
    const { html } = await (await dashboardClient(deps)).page("/");
    expect(html).toContain("What to do next");
    expect(html).toContain("The fleet shown is simulated.");
    for (const href of [
      "docs/quickstart-vast.md#1-the-one-key",
      "docs/quickstart-vast.md#2-how-instances-report",
      "docs/quickstart-vast.md#3-slack-in-five-steps",
    ])
      expect(html).toContain(`href="${DOCS_URL}${href}"`);
  });

  it("the simulator's own heartbeats do not count as the reporter; an instance reporting by webhook does", async () => {
    const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
    await (deps.provider as SimulatorProvider).seed(2);
    await reconcileFleet(deps, "default");
    // What the simulator's heartbeat check (fleet/providers/simulator-reports.ts) marks on its own instances.
    await deps.db.update(instances).set({ reportsByWebhook: true }).where(eq(instances.agentId, "default"));
    expect(await shownSteps(deps)).toEqual(["provider", "reporter", "channel"]);
    await webhookReport(deps, "box-1");
    expect(await shownSteps(deps)).toEqual(["provider", "channel"]);
  });

  it("a Slack channel ends the last step; Discord or ntfy count the same", async () => {
    for (const vars of <Record<string, string>[]>[
      { SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/x" },
      { DISCORD_WEBHOOK_URL: "https://discord.com/api/webhooks/1/x" },
      { NTFY_URL: "https://ntfy.sh/fleet-alerts" },
    ]) {
      const deps = await createTestDeps({ vars });
      expect(await shownSteps(deps), JSON.stringify(vars)).toEqual(["provider", "reporter"]);
    }
  });

  it("a real provider ends the first step; a gone instance's reports do not count", async () => {
    const deps = await createTestDeps({ provider: vast() });
    expect(await shownSteps(deps)).toEqual(["reporter", "channel"]);
    const { html } = await (await dashboardClient(deps)).page("/");
    expect(html).not.toContain("The fleet shown is simulated.");
    await webhookReport(deps, "4242");
    await deps.db.update(instances).set({ goneAt: deps.clock.now() }).where(eq(instances.id, "4242"));
    expect(await shownSteps(deps)).toEqual(["reporter", "channel"]);
  });

  it("is gone once every step is done", async () => {
    const deps = await createTestDeps({ provider: vast(), vars: { SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/x" } });
    await webhookReport(deps, "4242");
    expect(await shownSteps(deps)).toEqual([]);
    expect((await (await dashboardClient(deps)).page("/")).html).not.toContain("What to do next");
  });
});
