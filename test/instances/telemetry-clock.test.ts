/**
 * A report's telemetry is stored with its event even when the clock moves while the batch is
 * prepared: the sample and the event read one `now` (on a real clock the first report after a
 * start lost its figures, the two readings a millisecond apart).
 */
import { describe, expect, it } from "vitest";
import { instanceTelemetry } from "../../schema/index.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** A clock that moves a millisecond every time it is read, as a real one does under load. */
class TickingClock extends FakeClock {
  override now(): number {
    const now = super.now();
    this.advance(1);
    return now;
  }
}

describe("a report's telemetry", () => {
  it("is stored with its event when the clock moves between readings", async () => {
    const deps = await createTestDeps({ clock: new TickingClock() });
    await recordInstanceState(deps, {
      agentId: "default",
      instanceId: "r-1",
      state: "running",
      source: "webhook",
      dedupKey: "report-1",
      telemetry: { source: "webhook", gpuUtil: 97, progress: 1200 },
    });
    const samples = await deps.db.select().from(instanceTelemetry);
    expect(samples.map((s) => [s.instanceId, s.gpuUtil, s.progress])).toEqual([["r-1", 97, 1200]]);
  });
});
