/**
 * The other two ways in: the LLM's `replace_instance` tool (scripted OpenAI-compatible server on
 * loopback) proposes through the same rule, refused while the instance is not dead long enough;
 * and the whole replacement against the strict Vast.ai test server over real HTTP (offer search
 * excluding the old machine, one create, the old destroyed only after the new one boots).
 */
import { afterEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { approvals, instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, vastOffer, type VastServer } from "../fleet/vast-server.ts";
import { agentFixture, scriptedLlm, setInstanceState, trigger } from "../agent/harness.ts";
import { AFTER_S, decide, rows, tick } from "./support.ts";

describe("replace_instance, the LLM's tool", () => {
  it("files the approval-gated proposal only once the instance is dead for REPLACE_AFTER_S", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { REPLACE_AFTER_S: String(AFTER_S), SIMULATOR_FAILURE_RATE: "0" } });
    await setInstanceState(deps, "sim-1", "offline");
    const call = { tools: [{ name: "replace_instance", arguments: { instance_id: "sim-1", reason: "host lost" } }] };
    llm.push(call, { text: "Too early." });
    await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "offline" } });
    expect(await rows(deps)).toEqual([]);
    const early = llm.requests.at(-1)!.messages.find((m) => m.role === "tool");
    expect(early!.content).toMatch(/not_yet/);

    deps.clock.advance(AFTER_S * 1000);
    llm.push(call, { text: "Asked a human." });
    await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "offline" } });
    const [row] = await rows(deps);
    expect(row).toMatchObject({ oldInstanceId: "sim-1", status: "awaiting_approval", decidedBy: "llm" });
    expect(await deps.db.select().from(approvals)).toEqual([
      expect.objectContaining({ kind: "replace", requestedBy: "llm", status: "pending" }),
    ]);
  });
});

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("replacement against the Vast.ai test server", () => {
  it("searches offers off the old machine, rents once, destroys the old only after the new one boots", async () => {
    const apiKey = "vast-test-key-replace";
    const old = vastInstance(1, {
      actual_status: "offline",
      cur_state: "stopped",
      machine_id: 101,
      num_gpus: 2,
      dph_total: 0.6,
      disk_space: 100,
      image_uuid: "pytorch/pytorch:2.3",
      label: "trainer",
    });
    const server = await startVastServer({
      apiKey,
      instances: [old],
      // 1 is on the old machine (cheapest), 3 is too dear for 1.25 × 0.6: 2 is the one.
      offers: [vastOffer(1, { dph_total: 0.5 }), vastOffer(2, { dph_total: 0.7 }), vastOffer(3, { dph_total: 0.9 })],
    });
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
      label: "trainer",
      gpuName: "RTX 4090",
      gpuCount: 2,
      pricePerHour: 0.6,
      updatedAt: now,
    });
    deps.clock.advance(AFTER_S * 1000 + 1);

    const proposal = await proposeReplacement(deps, { agentId: "default", runId: null, decidedBy: "rules" }, "1");
    expect(proposal).toMatchObject({ status: "proposed", result: { status: "awaiting_approval" } });
    expect(server.created).toEqual([]);
    await decide(deps, "approve");
    expect(server.created).toEqual([]); // approving marks it approved; the tick rents
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    expect(server.created).toHaveLength(1);
    const [row] = await rows(deps);
    expect(row).toMatchObject({ status: "waiting", newInstanceId: String(server.created[0]), offer: expect.objectContaining({ id: "2" }) });

    await tick(deps);
    expect(server.instances.has(1)).toBe(true); // loading: the old one stays
    server.boot(server.created[0]!);
    expect((await tick(deps)).steps[0]!.outcome).toBe("done");
    expect(server.instances.has(1)).toBe(false);
    expect(server.created).toHaveLength(1);
    const [oldRow] = await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default"), eq(instances.id, "1")));
    expect(oldRow!.replacedBy).toBe(String(server.created[0]));
  });
});
