/**
 * The instance page's controls (issue #24 items 2, 4 and 6): a stop, reboot, destroy or replace
 * from the dashboard acts only on a second, explicit post — the first renders what will happen
 * (instance, GPU, $/h, state, the provider's risk) with a confirm form, and the provider sees no
 * call and no action row exists; only the actions the provider has are offered; the container log
 * is shown to operators through the provider's logs call (escaped; an error shown as an error),
 * and viewers get a note. Real libSQL, the simulator counted by CountingProvider.
 */
import { describe, expect, it } from "vitest";
import { createOperator } from "../../auth/operators-store.ts";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { actions, approvals } from "../../schema/index.ts";
import { CountingProvider } from "../actions/counting-provider.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDb, createTestDeps } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { ActionConfirm } from "../../dashboard/fleet/instance-actions.tsx";
import { dashboardClient } from "./dashboard-client.ts";

async function setup() {
  const db = await createTestDb();
  const clock = new FakeClock();
  const provider = new CountingProvider(db, clock);
  const deps = await createTestDeps({ db, clock, provider, vars: { SIMULATOR_FAILURE_RATE: "0" } });
  await provider.inner.seed(2);
  await reconcileFleet(deps, "default");
  provider.calls.length = 0;
  return { deps, provider, client: await dashboardClient(deps) };
}

const hidden = (html: string, name: string) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1];

describe("confirming a destructive action", () => {
  it.each(["stop", "reboot", "destroy"] as const)("%s: the first post only asks; the second acts", async (kind) => {
    const { deps, provider, client } = await setup();
    const first = await client.post("/fleet/sim-1/actions", { kind, nonce: `confirm-${kind}-1` });
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(html).toContain(`${kind[0]!.toUpperCase()}${kind.slice(1)} sim-1?`);
    expect(html).toMatch(/<dt>GPU<\/dt><dd>1× RTX 4090<\/dd>/);
    expect(html).toMatch(/<dt>Costs now<\/dt><dd>\$0\.42\/h<\/dd>/);
    expect(html).toMatch(/<dt>State<\/dt><dd>running<\/dd>/);
    expect(html).toContain("Nothing has been done yet.");
    if (kind === "destroy") expect(html).toContain("its disk is deleted");
    expect(hidden(html, "confirm")).toBe("yes");
    expect(hidden(html, "nonce")).toBe(`confirm-${kind}-1`);
    expect(hidden(html, "_csrf")).toBe(client.csrf);
    // Nothing happened: no provider call, no action, no approval.
    expect(provider.calls).toEqual([]);
    expect(await deps.db.select().from(actions)).toEqual([]);
    expect(await deps.db.select().from(approvals)).toEqual([]);

    const second = await client.post("/fleet/sim-1/actions", { kind, nonce: hidden(html, "nonce")!, confirm: "yes" });
    expect(second.status).toBe(303);
    const rows = await deps.db.select().from(actions);
    expect(rows.map((a) => [a.kind, a.operator])).toEqual([[kind, "admin"]]);
    // destroy is approval-gated by default: it files an approval and the provider still sees nothing.
    expect(provider.calls).toEqual(kind === "destroy" ? [] : [`${kind} sim-1`]);
    // A double-clicked "Yes" is the same action.
    await client.post("/fleet/sim-1/actions", { kind, nonce: hidden(html, "nonce")!, confirm: "yes" });
    expect(await deps.db.select().from(actions)).toHaveLength(1);
  });

  it("start needs no confirmation; a bad confirm value is a 400 and writes nothing", async () => {
    const { deps, provider, client } = await setup();
    await client.post("/fleet/sim-1/actions", { kind: "stop", nonce: "stop-first-1", confirm: "yes" });
    const start = await client.post("/fleet/sim-1/actions", { kind: "start", nonce: "start-now-1" });
    expect(start.status).toBe(303);
    expect(provider.calls).toEqual(["stop sim-1", "start sim-1"]);
    const bad = await client.post("/fleet/sim-2/actions", { kind: "stop", nonce: "stop-bad-1", confirm: "sure" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/confirm: must be yes/);
    expect(await deps.db.select().from(actions)).toHaveLength(2);
  });

  it("offers only the provider's actions: no replace without create, and a replace post is refused naming why", async () => {
    const { deps, provider, client } = await setup();
    const renting = (await client.page("/fleet/sim-1")).html;
    expect([...renting.matchAll(/<option value="(\w+)"/g)].map((m) => m[1])).toContain("replace");
    // The same simulator without its `create` capability.
    const withoutCreate = new Set([...provider.inner.capabilities].filter((c) => c !== "create"));
    Object.defineProperty(provider, "capabilities", { get: () => withoutCreate });
    const page = (await client.page("/fleet/sim-1")).html;
    expect(
      [...page.matchAll(/<option value="(\w+)"/g)]
        .map((m) => m[1])
        .filter((k) => ["start", "stop", "reboot", "destroy", "replace"].includes(k!)),
    ).toEqual(["start", "stop", "reboot", "destroy"]);
    const replace = await client.post("/fleet/sim-1/actions", { kind: "replace", nonce: "replace-1", confirm: "yes" });
    expect(replace.status).toBe(400);
    expect((await replace.json()).error).toBe("invalid form: kind: the simulator provider cannot replace");
    expect(provider.calls).toEqual([]);
    expect(await deps.db.select().from(actions)).toEqual([]);
  });

  it("names Vast.ai's risk of a stop: the GPU may go to another renter", async () => {
    const instance = { id: "123", label: null, state: "running", gpuName: "RTX 4090", gpuCount: 1, costPerHour: 0.5 } as Parameters<
      typeof ActionConfirm
    >[0]["instance"];
    const html = String(
      await (
        <ActionConfirm instance={instance} kind="stop" provider="vast" csrf="t" nonce="n-00000001" approvalRequired={false} />
      ).toString(),
    );
    expect(html).toContain("A stopped Vast.ai instance may lose its GPU to another renter");
    const sim = String(
      await (
        <ActionConfirm instance={instance} kind="stop" provider="simulator" csrf="t" nonce="n-00000001" approvalRequired={false} />
      ).toString(),
    );
    expect(sim).not.toContain("Vast.ai");
  });
});

describe("container logs on the instance page", () => {
  it("shows an operator the simulator's log through provider.logs, escaped, and a viewer a note", async () => {
    const { deps, provider, client } = await setup();
    const page = (await client.page("/fleet/sim-1")).html;
    const log = page.match(/data-testid="instance-log">([\s\S]*?)<\/pre>/)?.[1];
    expect(log).toBeTruthy();
    const direct = await provider.inner.logs("sim-1", { tailLines: 100, maxChars: 4000 });
    expect(log).toBe(direct.text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;"));

    const viewerToken = (await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now: deps.clock.now() })).token;
    const viewer = await dashboardClient(deps, viewerToken);
    const seen = (await viewer.page("/fleet/sim-1")).html;
    expect(seen).not.toContain('data-testid="instance-log"');
    expect(seen).toContain("Container logs are shown to operators");
  });

  it("renders log text escaped, and a provider error as an error, not an empty log", async () => {
    const { provider, client } = await setup();
    provider.inner.logs = async () => ({ text: "boot <script>alert(1)</script>", truncated: false });
    const escaped = (await client.page("/fleet/sim-1")).html;
    expect(escaped).toContain("boot &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(escaped).not.toContain("<script>alert(1)");
    provider.inner.logs = async () => {
      throw new ProviderError("simulator: logs unavailable", 503, true);
    };
    const failed = (await client.page("/fleet/sim-1")).html;
    expect(failed).toContain("The provider could not get the logs: simulator: logs unavailable");
    expect(failed).not.toContain('data-testid="instance-log"');
    expect(failed).not.toContain("The log is empty.");
  });

  it("reads the log once per page view: the live updates of the instance page never call the provider's logs", async () => {
    const { provider, client } = await setup();
    let calls = 0;
    const logs = provider.inner.logs.bind(provider.inner);
    provider.inner.logs = (id, request) => {
      calls++;
      return logs(id, request);
    };
    await client.page("/fleet/sim-1");
    expect(calls).toBe(1);
    for (let i = 0; i < 3; i++) {
      const live = await client.get(`/live?parts=instance&page=${encodeURIComponent("/fleet/sim-1")}`);
      expect(live.status).toBe(200);
      expect((await live.json()).html.instance).toContain("State history");
    }
    expect(calls).toBe(1);
  });
});
