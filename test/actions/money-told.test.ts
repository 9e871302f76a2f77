/**
 * Told, once, for every money move made without a human (fleet/actions/money-told.ts): an idle
 * stop by the economics rule and a rules restart reach the channel once, with why and what they
 * change per hour; a human's own stop is not echoed back; a repeated action key tells nothing
 * more; and a run's notices stay under NOTIFICATIONS_PER_RUN (the run's bound notice says so).
 */
import { afterEach, describe, expect, it } from "vitest";
import { like } from "drizzle-orm";
import { notifications } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { runEconomics } from "../support/one-check.ts";
import { deliverDue } from "../support/drive.ts";
import { fleetFixture, MIN, setInstance } from "../economics/economics-fixture.ts";
import { agentFixture, setInstanceState, trigger } from "../agent/harness.ts";
import { startReceiver, type Receiver } from "../notify/receiver.ts";
import type { TestDeps } from "../support/test-deps.ts";

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function slack(): Promise<Receiver> {
  const receiver = await startReceiver("/hook", 200, "slack");
  receivers.push(receiver);
  return receiver;
}

/** The texts the channel received (Slack's `text`). */
const texts = (receiver: Receiver) => receiver.received.map((r) => String((JSON.parse(r.body) as { text: string }).text));
const moneyNotices = (deps: TestDeps) => deps.db.select().from(notifications).where(like(notifications.dedupKey, "money:%"));

describe("a money move made without a human", () => {
  it("an idle stop by the economics rule is told once, with its signal and what it saves per hour", async () => {
    const receiver = await slack();
    const { deps, provider } = await fleetFixture({ IDLE_STOP_AFTER_S: "1800", SLACK_WEBHOOK_URL: receiver.url });
    const now = deps.clock.now();
    await setInstance(deps, "sim-2", {
      gpuUtil: 0,
      gpuUtilAt: now - MIN,
      idleSince: now - 31 * MIN,
      telemetrySource: "vast",
      pricePerHour: 2.3,
      storagePerHour: 0.2,
    });
    expect((await runEconomics(deps, "default")).stopped).toEqual([{ instanceId: "sim-2", status: "succeeded" }]);
    // The next tick sees the same episode: the action key answers with its record, nothing is told again.
    await runEconomics(deps, "default");
    await deliverDue(deps);

    expect(provider.calls).toEqual(["stop sim-2"]);
    const told = texts(receiver).filter((t) => t.includes("Stopped sim-2"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain("saves $2.10/h");
    expect(told[0]).toContain("gpu_util 0 % for 31 min, from Vast.ai");
    expect(told[0]).toContain("the rules stopped sim-2 without a human");
    expect(await moneyNotices(deps)).toHaveLength(1);
  });

  it("a rules restart in a run is told once, through the run (its fence and run id)", async () => {
    const receiver = await slack();
    const { deps } = await agentFixture({ vars: { SLACK_WEBHOOK_URL: receiver.url } });
    await setInstance(deps, "sim-1", { pricePerHour: 0.42, storagePerHour: 0.05 });
    await setInstanceState(deps, "sim-1", "stopped");
    const run = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "stopped" } });
    // A stopped instance is not the rules' to restart; an exited one is.
    expect(await moneyNotices(deps)).toHaveLength(0);
    await setInstanceState(deps, "sim-1", "exited");
    const restart = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
    expect(restart.runId).not.toBe(run.runId);

    const stored = await moneyNotices(deps);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ runId: restart.runId, instanceId: "sim-1" });
    const told = texts(receiver).filter((t) => t.includes("Started sim-1"));
    expect(told).toHaveLength(1);
    // Exited still holds its rental (billed in full): starting it costs nothing more.
    expect(told[0]).toContain("costs the same ($0.42/h)");
    expect(told[0]).toContain("instance exited unexpectedly");
  });

  it("a human's own stop is not told back to them; the same stop by the rules is", async () => {
    const receiver = await slack();
    const { deps } = await fleetFixture({ SLACK_WEBHOOK_URL: receiver.url });
    await setInstance(deps, "sim-1", { pricePerHour: 1, storagePerHour: 0.1 });
    const own = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-1",
      kind: "stop",
      decidedBy: "human",
      operator: "alice",
      idempotencyKey: "alice-stops-sim-1",
    });
    expect(own.status).toBe("succeeded");
    await deliverDue(deps);
    expect(await moneyNotices(deps)).toHaveLength(0);
    expect(texts(receiver)).toEqual([]);

    await setInstance(deps, "sim-3", { pricePerHour: 1, storagePerHour: 0.1 });
    await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-3",
      kind: "stop",
      decidedBy: "rules",
      idempotencyKey: "rules-stop-sim-3",
    });
    await deliverDue(deps);
    expect(texts(receiver)).toEqual([expect.stringContaining("Stopped sim-3: saves $0.90/h")]);
  });

  it("a repeat of the same action key is not told twice", async () => {
    const receiver = await slack();
    const { deps, provider } = await fleetFixture({ SLACK_WEBHOOK_URL: receiver.url });
    await setInstance(deps, "sim-1", { state: "stopped", pricePerHour: 1.5, storagePerHour: 0.3 });
    const request = {
      agentId: "default",
      runId: null,
      instanceId: "sim-1",
      kind: "reboot" as const,
      decidedBy: "llm" as const,
      model: "gpt-test",
      idempotencyKey: "llm-reboot-sim-1",
      reason: "the job asked for a fresh start",
    };
    expect((await executeAction(deps, request)).status).toBe("succeeded");
    const again = await executeAction(deps, request);
    expect(again).toMatchObject({ status: "succeeded", repeated: true });
    await deliverDue(deps);
    expect(provider.calls).toEqual(["reboot sim-1"]);
    // A reboot of a stopped instance starts billing its rental again.
    expect(texts(receiver)).toEqual([expect.stringContaining("Rebooted sim-1: adds $1.20/h")]);
    expect(texts(receiver)[0]).toContain("gpt-test rebooted sim-1 without a human");
  });

  it("a run's money notices count against NOTIFICATIONS_PER_RUN; past it a human is told once of the bound", async () => {
    const { deps } = await fleetFixture({ NOTIFICATIONS_PER_RUN: "1" });
    for (const id of ["sim-1", "sim-2", "sim-3"]) {
      await executeAction(deps, {
        agentId: "default",
        runId: 7,
        instanceId: id,
        kind: "stop",
        decidedBy: "rules",
        idempotencyKey: `stop-${id}`,
      });
    }
    const titles = (await deps.db.select().from(notifications).orderBy(notifications.id)).map((n) => n.title);
    expect(titles).toEqual([expect.stringMatching(/^Stopped sim-1: /), "Run 7 hit its notifications bound"]);
  });
});
