/**
 * Attack: one instance (compromised, or a runaway loop in its reporter) floods its agent with
 * signed reports, about 1,000 a second; every one is stored as an event, a telemetry sample and
 * (for a change) a history row, so the database and the agent's event stream drown.
 * Guard: fleet/instances/report-flood.ts stores at most REPORTS_STORED_PER_MINUTE reports per
 * instance per minute (counted on the instance's row by the batch that stores one); past it a report still updates the
 * instance's latest state (state, message, last seen, utilisation) and is answered 202 with a
 * note, but stores no event, telemetry or history row. The next minute stores again.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { createTestDeps } from "../support/test-deps.ts";

/** The setting's default (runtime/settings/rows-access.ts). */
const REPORTS_STORED_PER_MINUTE = 60;

describe("one instance floods its agent with reports", () => {
  it("1,000 reports in a burst store a bounded number of rows and keep the newest state", async () => {
    const deps = await createTestDeps();
    await (deps.provider as SimulatorProvider).seed(2);
    const app = buildApp(() => deps);
    const count = async (sql: string) => Number((await deps.db.$client.execute(sql)).rows[0]!.n);
    const rows = async () => ({
      events: await count("select count(*) as n from events where source = 'webhook'"),
      telemetry: await count("select count(*) as n from instance_telemetry where source = 'webhook'"),
      history: await count("select count(*) as n from instance_events where source = 'webhook'"),
    });
    const report = (i: number, state = i % 2 ? "running" : "offline") =>
      app.request(
        "/webhooks/default/instances",
        signedWebhook(`flood-${i}`, { instanceId: "sim-1", state, gpuUtil: i % 100, message: `report ${i}` }),
      );
    const statuses: number[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, (_, k) => report(i + k)));
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses.every((s) => s === 202)).toBe(true);
    const stored = await rows();
    expect(stored.events).toBeLessThanOrEqual(REPORTS_STORED_PER_MINUTE + 50);
    expect(stored.telemetry).toBeLessThanOrEqual(REPORTS_STORED_PER_MINUTE + 50);
    expect(stored.history).toBeLessThanOrEqual(REPORTS_STORED_PER_MINUTE + 50);

    // Past the bound the answer says so, and the newest state is the instance's.
    const last = await report(1000, "stopped");
    expect(last.status).toBe(202);
    expect(((await last.json()) as { note?: string }).note).toMatch(/REPORTS_STORED_PER_MINUTE|per minute/);
    const inst = (await deps.db.$client.execute("select state, status_message, gpu_util from instances where id = 'sim-1'")).rows[0]!;
    expect(inst.state).toBe("stopped");
    expect(inst.status_message).toBe("report 1000");
    expect(await rows()).toEqual(stored);

    // The next minute stores again.
    deps.clock.advance(61_000);
    expect((await report(1001, "running")).status).toBe(202);
    expect((await rows()).events).toBe(stored.events + 1);
  });

  it("holds for one instance among many reporting ones (its reports a small share of the agent's newest events)", async () => {
    const deps = await createTestDeps();
    await (deps.provider as SimulatorProvider).seed(40);
    const app = buildApp(() => deps);
    const report = (id: string, i: number) =>
      app.request(
        "/webhooks/default/instances",
        signedWebhook(`many-${id}-${i}`, { instanceId: id, state: i % 2 ? "running" : "offline" }),
      );
    // 80 rounds; in each, the flooding instance reports once among 39 others (2.5% of the events).
    for (let round = 0; round < 80; round++) {
      const statuses = await Promise.all(
        Array.from({ length: 40 }, (_, k) => report(`sim-${k + 1}`, round)).map(async (r) => (await r).status),
      );
      expect(statuses.every((s) => s === 202)).toBe(true);
    }
    const stored = async (id: string) =>
      Number(
        (
          await deps.db.$client.execute({
            sql: "select count(*) as n from events where source = 'webhook' and json_extract(payload, '$.instanceId') = ?",
            args: [id],
          })
        ).rows[0]!.n,
      );
    expect(await stored("sim-40")).toBe(REPORTS_STORED_PER_MINUTE);
    expect(await stored("sim-7")).toBe(REPORTS_STORED_PER_MINUTE);
    const row = (await deps.db.$client.execute("select reports_in_minute as n from instances where id = 'sim-40'")).rows[0]!;
    expect(Number(row.n)).toBe(REPORTS_STORED_PER_MINUTE);
  });

  it("is the deployment's REPORTS_STORED_PER_MINUTE", async () => {
    const deps = await createTestDeps({ vars: { REPORTS_STORED_PER_MINUTE: "15" } });
    await (deps.provider as SimulatorProvider).seed(3);
    const app = buildApp(() => deps);
    for (let i = 0; i < 40; i++) {
      const res = await app.request("/webhooks/default/instances", signedWebhook(`set-${i}`, { instanceId: "sim-3", state: "running" }));
      expect(res.status).toBe(202);
    }
    const stored = await deps.db.$client.execute("select count(*) as n from events where source = 'webhook'");
    expect(Number(stored.rows[0]!.n)).toBe(15);
  });
});
