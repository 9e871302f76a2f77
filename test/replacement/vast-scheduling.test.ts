/**
 * Vast.ai's lost GPU (issue #33 item 3): a start Vast.ai accepts can leave the instance sitting in
 * `scheduling` when its host no longer has the GPU (vast-cli `start instance`: stuck there for
 * more than 30 s means the machine's resources are unavailable). The lost-GPU rule recognises it,
 * but only after REPLACE_AFTER_S in that state (a start schedules briefly), and the proposal says
 * so with Vast's scheduling message; the instance reads as unknown with that message meanwhile.
 */
import { afterEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, vastOffer, type VastServer } from "../fleet/vast-server.ts";
import { AFTER_S, rows } from "./support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("Vast.ai start stuck in scheduling", () => {
  it("is proposed for replacement as a lost GPU after REPLACE_AFTER_S, not at once, with the scheduling message", async () => {
    const apiKey = "vast-key-scheduling";
    const server = await startVastServer({
      apiKey,
      instances: [
        vastInstance(1, {
          actual_status: "stopped",
          intended_status: "stopped",
          cur_state: "stopped",
          machine_id: 101,
          num_gpus: 2,
          dph_total: 0.6,
          image_uuid: "pytorch/pytorch:2.3",
        }),
      ],
      offers: [vastOffer(2, { dph_total: 0.62 })],
      gpuLost: [1],
    });
    servers.push(server);
    const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
    const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey } });
    await runCronTick(deps);
    const started = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "1",
      kind: "start",
      decidedBy: "human",
      operator: "ops@example.com",
      idempotencyKey: "start-1",
      reason: "test",
    });
    expect(started.status).toBe("succeeded");
    deps.clock.advance(60_000);
    await runCronTick(deps);
    const read = async () =>
      (
        await deps.db
          .select()
          .from(instances)
          .where(and(eq(instances.agentId, "default"), eq(instances.id, "1")))
      )[0]!;
    expect(await read()).toMatchObject({ state: "unknown", statusMessage: "scheduling: waiting for the host's GPUs" });

    const who = { agentId: "default", runId: null, decidedBy: "rules" as const };
    const early = await proposeReplacement(deps, who, "1");
    expect(early).toMatchObject({ status: "not_yet" });
    expect(early.detail).toMatch(/sat in scheduling after a start that succeeded/);
    expect(await rows(deps)).toEqual([]);

    deps.clock.advance(AFTER_S * 1000);
    const due = await proposeReplacement(deps, who, "1");
    expect(due.status).toBe("proposed");
    expect(await rows(deps)).toEqual([
      expect.objectContaining({
        oldInstanceId: "1",
        reason: expect.stringMatching(/sat in scheduling.*lost the GPU \(scheduling: waiting for the host's GPUs\)/),
      }),
    ]);
  });
});
