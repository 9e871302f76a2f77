/**
 * A gone instance can be replaced (issue #33 item 3): reconciliation stores the instance's spec
 * when it is first seen (instances.spec), so once the provider no longer lists it, the
 * replacement is made from the stored image, env and onstart instead of failing for an unknown image.
 */
import { afterEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, vastOffer, type VastServer } from "../fleet/vast-server.ts";
import { AFTER_S, decide, rows, tick } from "./support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("stored spec", () => {
  it("replaces an instance the provider no longer lists, from the spec stored when it was first seen", async () => {
    const apiKey = "vast-test-key-spec";
    const server = await startVastServer({
      apiKey,
      instances: [
        vastInstance(1, {
          machine_id: 101,
          num_gpus: 2,
          dph_total: 0.6,
          disk_space: 100,
          image_uuid: "pytorch/pytorch:2.3",
          onstart: "python train.py",
          extra_env: [["RUN", "42"]],
        }),
      ],
      offers: [vastOffer(2, { dph_total: 0.62 })],
    });
    servers.push(server);
    const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
    const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey } });
    await runCronTick(deps);
    const [seen] = await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default"), eq(instances.id, "1")));
    expect(seen!.spec).toMatchObject({ image: "pytorch/pytorch:2.3", onstart: "python train.py", env: { RUN: "42" } });

    server.instances.delete(1); // gone from the provider: no live spec any more
    deps.clock.advance(60_000);
    await runCronTick(deps);
    deps.clock.advance(AFTER_S * 1000);
    await runCronTick(deps);
    expect(await rows(deps)).toEqual([
      expect.objectContaining({ status: "awaiting_approval", spec: expect.objectContaining({ image: "pytorch/pytorch:2.3" }) }),
    ]);
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    const created = server.instances.get(server.created[0]!) as Record<string, unknown>;
    expect(created).toMatchObject({ image_uuid: "pytorch/pytorch:2.3", onstart: "python train.py" });
  });
});
