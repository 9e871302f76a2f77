/**
 * A RunPod replacement keeps the old pod's ports and volume (issue #33 item 3): reconciliation
 * stores them with the spec when the pod is first seen (REST GET /pods answers ports as a list), and
 * the create of the replacement (REST POST /pods, https://docs.runpod.io/api-reference/pods/POST/pods)
 * sends `ports` (a list), `volumeInGb` and `volumeMountPath`, even once the old pod is gone from
 * RunPod's answer.
 */
import { afterEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { RunpodProvider } from "../../fleet/providers/runpod.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { runpodPodRow, startRunpodServer, type RunpodServer } from "../fleet/runpod-server.ts";
import { AFTER_S, decide, rows, tick } from "./support.ts";

const servers: RunpodServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("RunPod replacement", () => {
  it("deploys the replacement with the old pod's ports, volume size and mount path", async () => {
    const apiKey = "rp-key-ports";
    const server = await startRunpodServer({
      apiKey,
      pods: [runpodPodRow("oldpod1", { ports: "8888/http, 22/tcp", volumeInGb: 75, volumeMountPath: "/data", costPerHr: 0.69 })],
      gpuTypes: [
        {
          id: "NVIDIA GeForce RTX 4090",
          displayName: "RTX 4090",
          memoryInGb: 24,
          lowestPrice: { minimumBidPrice: 0.3, uninterruptablePrice: 0.69 },
        },
      ],
    });
    servers.push(server);
    const provider = new RunpodProvider({ apiKey, url: server.url, sleep: async () => {} });
    const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), RUNPOD_API_KEY: apiKey } });
    await runCronTick(deps);
    const [seen] = await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default"), eq(instances.id, "oldpod1")));
    expect(seen!.spec).toMatchObject({ ports: "8888/http,22/tcp", volumeGb: 75, volumeMountPath: "/data" });

    server.pods.delete("oldpod1"); // gone: only the stored spec is left
    deps.clock.advance(60_000);
    await runCronTick(deps);
    deps.clock.advance(AFTER_S * 1000);
    await runCronTick(deps);
    expect(await rows(deps)).toEqual([expect.objectContaining({ status: "awaiting_approval" })]);
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    const create = server.requests.find((r) => r.method === "POST" && r.path === "/v1/pods");
    expect(create!.body).toMatchObject({ ports: ["8888/http", "22/tcp"], volumeInGb: 75, volumeMountPath: "/data" });
    const created = [...server.pods.values()].find((p) => p.id.startsWith("newpod"))!;
    expect(created).toMatchObject({ ports: "8888/http,22/tcp", volumeInGb: 75, volumeMountPath: "/data" });
  });
});
