/**
 * The instance webhook's `progress` (issue 34, item 3): a non-negative number, stored on the
 * instance (progress, progressAt, progressMovedAt) and in its telemetry sample; `progressMovedAt`
 * moves only when the counter changes (a reset to a lower value is a new episode, so it moves
 * too); a bad value is a 400 naming the field and writes nothing.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";

let n = 0;
async function report(deps: TestDeps, body: Record<string, unknown>) {
  return buildApp(() => deps).request(
    "/webhooks/default/instances",
    signedWebhook(`progress-${++n}`, { instanceId: "gpu-1", state: "running", ...body }),
  );
}

async function row(deps: TestDeps) {
  const [r] = (await deps.db.$client.execute("select progress, progress_at, progress_moved_at from instances where id = 'gpu-1'")).rows;
  return r ? { progress: r.progress, at: r.progress_at, movedAt: r.progress_moved_at } : undefined;
}

describe("progress in the instance webhook", () => {
  it("is stored on the instance and in its sample; movedAt follows changes only", async () => {
    const deps = await createTestDeps();
    const t0 = deps.clock.now();
    expect((await report(deps, { progress: 1200, gpuUtil: 97 })).status).toBe(202);
    expect(await row(deps)).toEqual({ progress: 1200, at: t0, movedAt: t0 });
    const samples = (await deps.db.$client.execute("select progress, gpu_util from instance_telemetry")).rows;
    expect(samples.map((s) => [s.progress, s.gpu_util])).toEqual([[1200, 97]]);

    deps.clock.advance(60_000);
    await report(deps, { progress: 1200 });
    expect(await row(deps)).toEqual({ progress: 1200, at: t0 + 60_000, movedAt: t0 });

    deps.clock.advance(60_000);
    await report(deps, { progress: 1300 });
    expect(await row(deps)).toEqual({ progress: 1300, at: t0 + 120_000, movedAt: t0 + 120_000 });

    // A reset (the job restarted from zero) is movement: a new episode begins.
    deps.clock.advance(60_000);
    await report(deps, { progress: 5 });
    expect(await row(deps)).toEqual({ progress: 5, at: t0 + 180_000, movedAt: t0 + 180_000 });

    // A report without progress leaves the counter alone.
    deps.clock.advance(60_000);
    await report(deps, { gpuUtil: 50 });
    expect(await row(deps)).toEqual({ progress: 5, at: t0 + 180_000, movedAt: t0 + 180_000 });
  });

  it("an older report does not move the counter back", async () => {
    const deps = await createTestDeps();
    const t0 = deps.clock.now();
    await report(deps, { progress: 100 });
    await report(deps, { progress: 50, at: new Date(t0 - 60_000).toISOString() });
    expect(await row(deps)).toEqual({ progress: 100, at: t0, movedAt: t0 });
  });

  for (const [what, progress] of [
    ["negative", -1],
    ["text", "12"],
    ["null", null],
    ["too large", 2 ** 60],
  ] as const) {
    it(`refuses a ${what} progress with a 400 naming the field, writing nothing`, async () => {
      const deps = await createTestDeps();
      const res = await report(deps, { progress });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/progress/);
      expect(await row(deps)).toBeUndefined();
      expect((await deps.db.$client.execute("select count(*) as n from events")).rows[0]!.n).toBe(0);
    });
  }
});
