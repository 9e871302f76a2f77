/**
 * Where a stall is shown, each read through fleet/instances/stall.ts's one rule: the snapshot the
 * model reads, get_instance's telemetry (fleet/economics/instance-economics.ts), the dashboard's
 * attention strip and the instance page. An instance whose progress keeps moving shows none.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { instanceEconomics } from "../../fleet/economics/instance-economics.ts";
import { snapshotText } from "../../agent/prompt/prompt-snapshot.ts";
import { instances } from "../../schema/index.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";

const MIN = 60_000;
let webhookId = 0;
const report = (deps: TestDeps, instanceId: string, progress: number) =>
  recordInstanceState(deps, {
    agentId: "default",
    instanceId,
    state: "running",
    source: "webhook",
    dedupKey: `stall-${++webhookId}`,
    telemetry: { gpuUtil: 97, progress, source: "webhook" as const },
  });

/** gpu-1 frozen at 1200 for 31 minutes, gpu-2 moving; both reporting every 5 minutes. */
async function fleet(): Promise<TestDeps> {
  const deps = await createTestDeps();
  for (let minute = 0; minute <= 31; minute++) {
    if (minute % 5 === 0 || minute === 31) {
      await report(deps, "gpu-1", 1200);
      await report(deps, "gpu-2", 100 + minute);
    }
    if (minute < 31) deps.clock.advance(MIN);
  }
  return deps;
}

const SIGNAL = "GPU 97 %, progress 1200 unchanged for 31 min";
const strip = (html: string) => html.match(/<div class="attention[\s\S]*?<\/ul>/)?.[0] ?? "";
const attentionItem = (html: string, id: string) =>
  strip(html).match(new RegExp(`<li data-testid="attention-instance" data-instance-id="${id}">[\\s\\S]*?</li>`))?.[0] ?? null;

describe("a stall, where it is shown", () => {
  it("the snapshot the model reads names the signal; a moving instance shows only its counter", async () => {
    const deps = await fleet();
    const rows = await deps.db.select().from(instances).where(eq(instances.agentId, "default"));
    const text = snapshotText({ rows, spendTodayUsd: 0, now: deps.clock.now() }, deps.config);
    expect(text).toContain(`"progress":1200,"stalled":"${SIGNAL}"`);
    expect(text).toContain('"progress":131');
    expect(text.match(/"stalled"/g)).toHaveLength(1);
  });

  it("get_instance's telemetry says stalled and why", async () => {
    const deps = await fleet();
    const frozen = await instanceEconomics(deps, "default", "gpu-1");
    expect(frozen!.telemetry.progress).toMatchObject({ value: 1200, stalled: true, forMinutes: 31, signal: SIGNAL });
    const moving = await instanceEconomics(deps, "default", "gpu-2");
    expect(moving!.telemetry.progress).toMatchObject({ value: 131, stalled: false });
  });

  it("the attention strip and the instance page show it", async () => {
    const deps = await fleet();
    const client = await dashboardClient(deps);
    const home = (await client.page("/")).html;
    expect(attentionItem(home, "gpu-1")).toContain(`stalled: ${SIGNAL}`);
    expect(attentionItem(home, "gpu-2")).toBeNull();
    const page = (await client.page("/fleet/gpu-1")).html;
    expect(page).toContain("Stalled");
    expect(page).toContain(SIGNAL);
    expect((await client.page("/fleet/gpu-2")).html).not.toContain(">Stalled<");
  });
});
