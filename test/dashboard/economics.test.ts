/**
 * The economics dashboard, computed from rows the real code paths write: spend today against the
 * limit and the last 7 days on the overview (instance_spend), idle instances (fresh telemetry
 * only, by fleet/economics/idle.ts's one rule) and the agent over its limit once in the attention strip (naming what still spends), utilisation in the
 * fleet table, and a 24-hour utilisation sparkline on the instance page.
 */
import { describe, expect, it } from "vitest";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { eq } from "drizzle-orm";
import { instances, instanceSpend } from "../../schema/index.ts";
import { idleState } from "../../fleet/economics/idle.ts";
import { utcDay } from "../../fleet/economics/spend.ts";
import { DAY_MS } from "../../runtime/time.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";
import { SAMPLE_EVERY_MS } from "../../fleet/instances/telemetry.ts";

let webhookId = 0;
const report = (deps: TestDeps, instanceId: string, gpuUtil: number | undefined, pricePerHour = 0.5) =>
  recordInstanceState(deps, {
    agentId: "default",
    instanceId,
    state: "running",
    source: "webhook",
    dedupKey: `econ-${++webhookId}`,
    details: { pricePerHour },
    ...(gpuUtil !== undefined ? { telemetry: { gpuUtil, source: "webhook" as const } } : {}),
  });

const spend = (deps: TestDeps, instanceId: string, daysAgo: number, usd: number) =>
  deps.db.insert(instanceSpend).values({ agentId: "default", instanceId, day: utcDay(deps.clock.now() - daysAgo * DAY_MS), usd });

const strip = (html: string) => html.match(/<div class="attention[\s\S]*?<\/ul>/)![0];
const attentionItem = (html: string, id: string) =>
  strip(html).match(new RegExp(`<li data-testid="attention-instance" data-instance-id="${id}">[\\s\\S]*?</li>`))?.[0] ?? null;

describe("overview: spend", () => {
  it("shows spend today against the limit and the last 7 days, from instance_spend", async () => {
    const deps = await createTestDeps({ vars: { SPEND_LIMIT_PER_DAY_USD: "10" } });
    await spend(deps, "a", 0, 3.5);
    await spend(deps, "b", 0, 1.25);
    await spend(deps, "a", 3, 2);
    await spend(deps, "a", 8, 99);
    const { html } = await (await dashboardClient(deps)).page("/");
    expect(html).toContain("Spent $4.75 of the $10.00 daily limit today (UTC), 48 %.");
    expect(html).toMatch(/<meter id="spend-gauge"[^>]*value="4.75"/);
    expect(html).toContain("$6.75 in the last 7 days; the most in one day $4.75.");
    const table = html.match(/<table>[\s\S]*?Day \(UTC\)[\s\S]*?<\/table>/)![0];
    expect(table.match(/<tr>/g)).toHaveLength(8); // the header and seven days
    expect(table).toContain(`<th scope="row">${utcDay(deps.clock.now()).slice(5)}</th><td>4.75</td>`);
    expect(table).not.toContain("99");
  });

  it("without a limit says so; at the limit says over budget", async () => {
    const none = await createTestDeps();
    await spend(none, "a", 0, 2);
    expect((await (await dashboardClient(none)).page("/")).html).toContain("Spent $2.00 today (UTC); no daily limit is set.");
    const over = await createTestDeps({ vars: { SPEND_LIMIT_PER_DAY_USD: "2" } });
    await spend(over, "a", 0, 2);
    expect((await (await dashboardClient(over)).page("/")).html).toContain(
      "Spent $2.00 of the $2.00 daily limit today (UTC), 100 %: over budget.",
    );
  });
});

describe("overview: what the fleet costs now", () => {
  it("counts each instance at its cost now, stopped ones at their storage, and says so and what it left out", async () => {
    const deps = await createTestDeps();
    await report(deps, "gpu-1", 80, 2);
    const stopped = { agentId: "default", instanceId: "gpu-2", source: "webhook" as const, dedupKey: "econ-stopped" };
    await recordInstanceState(deps, { ...stopped, state: "stopped", details: { pricePerHour: 1, storagePerHour: 0.25 } });
    await recordInstanceState(deps, {
      agentId: "default",
      instanceId: "gpu-3",
      state: "running",
      source: "webhook",
      dedupKey: "econ-unpriced",
      details: { pricePerHour: null },
    });
    const { html } = await (await dashboardClient(deps)).page("/");
    // gpu-1 at its $2.00/h price, gpu-2 at its $0.25/h storage (not its $1.00 price), gpu-3 unpriced.
    expect(html).toContain(
      "3 instances: 2 running, 1 stopped; the fleet costs $2.25/h now, the storage of stopped instances ($0.25/h) included; 1 without a known price left out.",
    );
  });
});

describe("attention strip: idle and over budget", () => {
  it("an instance idle on fresh telemetry is listed with its utilisation and for how long; stale telemetry is not idleness", async () => {
    const deps = await createTestDeps({ vars: { IDLE_GPU_UTIL_PCT: "5", TELEMETRY_STALE_S: "600" } });
    await report(deps, "gpu-idle", 1);
    await report(deps, "gpu-busy", 80);
    deps.clock.advance(5 * 60_000);
    await report(deps, "gpu-idle", 0);
    const client = await dashboardClient(deps);
    const html = (await client.page("/")).html;
    expect(attentionItem(html, "gpu-idle")).toContain("idle: GPU at 0 % for 5 min");
    expect(attentionItem(html, "gpu-busy")).toBeNull();
    // Eleven minutes without a sample: the idle mark is no longer believed.
    deps.clock.advance(11 * 60_000);
    expect(attentionItem((await client.page("/")).html, "gpu-idle")).toBeNull();
  });

  it("over the daily limit, the agent's one over-budget item names the instances that spent today and still cost money; under it, none", async () => {
    const deps = await createTestDeps({ vars: { SPEND_LIMIT_PER_DAY_USD: "5" } });
    await report(deps, "gpu-1", 90, 2);
    await report(deps, "gpu-2", 90, 1);
    await spend(deps, "gpu-1", 0, 3);
    const client = await dashboardClient(deps);
    expect(attentionItem((await client.page("/")).html, "gpu-1")).toBeNull();
    await spend(deps, "gpu-2", 0, 2.5);
    const html = (await client.page("/")).html;
    expect(attentionItem(html, "gpu-1")).toBeNull();
    expect(strip(html)).toContain("Still spending: gpu-1 ($3.00 today), gpu-2 ($2.50 today).");
  });
});

describe("one idle rule (fleet/economics/idle.ts)", () => {
  it("an idle mark the current threshold no longer calls idle is not idle on the dashboard either, as the economics check judges it", async () => {
    const marked = await createTestDeps({ vars: { IDLE_GPU_UTIL_PCT: "5" } });
    await report(marked, "gpu-1", 3);
    marked.clock.advance(5 * 60_000);
    await report(marked, "gpu-1", 3);
    const fleetRow = (html: string) => html.match(/<tr data-instance-id="gpu-1"[\s\S]*?<\/tr>/)![0];
    const before = await dashboardClient(marked);
    expect(attentionItem((await before.page("/")).html, "gpu-1")).toContain("idle: GPU at 3 % for 5 min");
    expect(fleetRow((await before.page("/fleet")).html)).toMatch(/>idle</);
    // The threshold lowered to 2 %: the stored idleSince stays until the next sample, but 3 % is work.
    const lowered = await createTestDeps({ db: marked.db, clock: marked.clock, vars: { IDLE_GPU_UTIL_PCT: "2" } });
    const [row] = await lowered.db.select().from(instances).where(eq(instances.id, "gpu-1"));
    expect(row!.idleSince).not.toBeNull();
    expect(idleState(row!, lowered.clock.now(), lowered.config.economics)).toMatchObject({
      idle: false,
      signal: "gpu_util 3 %, from the instance's webhook: working",
    });
    const after = await dashboardClient(lowered);
    expect(attentionItem((await after.page("/")).html, "gpu-1")).toBeNull();
    expect(fleetRow((await after.page("/fleet")).html)).not.toMatch(/>idle</);
  });
});

describe("fleet table and instance page: utilisation", () => {
  it("the fleet table shows each instance's latest utilisation, idle marked", async () => {
    const deps = await createTestDeps({ vars: { IDLE_GPU_UTIL_PCT: "5" } });
    await report(deps, "gpu-1", 73);
    await report(deps, "gpu-2", 2);
    await report(deps, "gpu-3", undefined);
    const { html } = await (await dashboardClient(deps)).page("/fleet");
    expect(html).toContain("GPU util.");
    const row = (id: string) => html.match(new RegExp(`<tr data-instance-id="${id}"[\\s\\S]*?</tr>`))![0];
    expect(row("gpu-1")).toContain('<td data-gpu-util="73">73 %');
    expect(row("gpu-2")).toMatch(/data-gpu-util="2">2 %<span[^>]*>idle</);
    expect(row("gpu-3")).not.toContain("data-gpu-util");
  });

  it("the instance page draws the last 24 hours of samples as a sparkline with its summary", async () => {
    const deps = await createTestDeps();
    await report(deps, "gpu-1", 99);
    deps.clock.advance(DAY_MS + 60_000);
    await report(deps, "gpu-1", 60);
    deps.clock.advance(SAMPLE_EVERY_MS);
    await report(deps, "gpu-1", 20);
    deps.clock.advance(SAMPLE_EVERY_MS);
    await report(deps, "gpu-1", 45);
    const { html } = await (await dashboardClient(deps)).page("/fleet/gpu-1");
    expect(html).toContain("GPU utilisation, last 24 hours: 3 samples, from 20 % to 60 %, latest 45 %.");
    const points = html.match(/<polyline[^>]*points="([^"]+)"/)![1]!.split(" ");
    expect(points).toHaveLength(3);
    expect(html).toContain("Costs now");
  });
});
