/**
 * The idle threshold's boundary, both ways. README and docs say idle is utilisation *below*
 * IDLE_GPU_UTIL_PCT: a sample exactly at the threshold is work, one just under it is idle. Two
 * places apply the rule and each is pinned here: the write that keeps `idleSince`
 * (fleet/instances/telemetry.ts) and the reader that judges it (fleet/economics/idle.ts), which
 * must not call an instance idle at the threshold even when a mark is present.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { idleState } from "../../fleet/economics/idle.ts";
import { createTestDeps, testConfig } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";

const THRESHOLD = 5;
const MIN = 60_000;
const NOW = Date.UTC(2026, 0, 1, 12);
const economics = testConfig({ IDLE_GPU_UTIL_PCT: String(THRESHOLD) }).economics;
const marked = { state: "running", gpuUtilAt: NOW - MIN, idleSince: NOW - 31 * MIN, telemetrySource: "vast" };

describe("idleState at the threshold", () => {
  it("utilisation exactly at IDLE_GPU_UTIL_PCT is working, even with an idle mark", () => {
    expect(idleState({ ...marked, gpuUtil: THRESHOLD }, NOW, economics)).toEqual({
      idle: false,
      forMs: 0,
      signal: "gpu_util 5 %, from Vast.ai: working",
    });
  });
  it("utilisation just under it is idle", () => {
    expect(idleState({ ...marked, gpuUtil: THRESHOLD - 0.01 }, NOW, economics)).toMatchObject({ idle: true, forMs: 31 * MIN });
  });
});

describe("the idle mark written by a telemetry sample at the threshold", () => {
  async function reportGpu(gpuUtil: number) {
    const deps = await createTestDeps({ vars: { IDLE_GPU_UTIL_PCT: String(THRESHOLD) } });
    const res = await buildApp(() => deps).request(
      "/webhooks/default/instances",
      signedWebhook(`t-${gpuUtil}`, { instanceId: "gpu-1", state: "running", gpuUtil }),
    );
    expect(res.status).toBe(202);
    const [row] = (await deps.db.$client.execute("select idle_since from instances where id = 'gpu-1'")).rows;
    return { idleSince: row!.idle_since, now: deps.clock.now() };
  }

  it("a sample exactly at IDLE_GPU_UTIL_PCT sets no idle mark", async () => {
    expect((await reportGpu(THRESHOLD)).idleSince).toBeNull();
  });
  it("a sample just under it sets the mark to the sample's time", async () => {
    const { idleSince, now } = await reportGpu(THRESHOLD - 0.01);
    expect(idleSince).toBe(now);
  });
});
