/**
 * The attack (issue #33 item 6): the replacement destroyed the old instance without re-checking it
 * was still dead. Now the old instance is re-read when the new one runs and, back to running, is
 * left alone (the replacement fails and a human decides which to keep).
 */
import { afterEach, describe, expect, it } from "vitest";
import { instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, vastOffer, type VastServer } from "../fleet/vast-server.ts";
import { AFTER_S, decide, rows, tick } from "./support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("the old instance is re-read before it is destroyed", () => {
  it("an old instance running again is not destroyed", async () => {
    const apiKey = "vast-test-key-back";
    const old = vastInstance(1, {
      actual_status: "offline",
      cur_state: "stopped",
      machine_id: 101,
      num_gpus: 2,
      dph_total: 0.6,
      image_uuid: "pytorch/pytorch:2.3",
    });
    const server = await startVastServer({ apiKey, instances: [old], offers: [vastOffer(2, { dph_total: 0.62 })] });
    servers.push(server);
    const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
    const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey } });
    const now = deps.clock.now();
    await deps.db.insert(instances).values({
      agentId: "default",
      id: "1",
      state: "offline",
      stateAt: now,
      lastSeenAt: now,
      gpuName: "RTX 4090",
      gpuCount: 2,
      pricePerHour: 0.6,
      updatedAt: now,
    });
    deps.clock.advance(AFTER_S * 1000 + 1);
    await proposeReplacement(deps, { agentId: "default", runId: null, decidedBy: "rules" }, "1");
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");

    Object.assign(server.instances.get(1)!, { actual_status: "running", cur_state: "running" }); // the host came back
    server.boot(server.created[0]!);
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    expect(server.instances.has(1)).toBe(true);
    expect((await rows(deps))[0]!.error).toMatch(/running again/);
  });
});
