/**
 * A quiet fleet (issue #33 item 3): one Vast.ai instance goes offline, nothing else happens, the
 * default rules policy. The ticks alone (fleet/replacement/replacement-due.ts) file the replacement
 * proposal once REPLACE_AFTER_S has passed, not before, and only once per death: later ticks, and a
 * human's "no", file nothing more.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { approvals, events } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, type VastServer } from "../fleet/vast-server.ts";
import { AFTER_S, decide, rows } from "./support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function quietFleet() {
  const apiKey = "vast-test-key-quiet";
  const server = await startVastServer({
    apiKey,
    instances: [vastInstance(1, { actual_status: "offline", cur_state: "stopped", machine_id: 101, dph_total: 0.6, label: "trainer" })],
  });
  servers.push(server);
  const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
  const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey } });
  return { deps, server };
}

const asked = async (deps: Awaited<ReturnType<typeof quietFleet>>["deps"]) =>
  deps.db.select().from(approvals).where(eq(approvals.kind, "replace"));

describe("replacement in a quiet fleet", () => {
  it("the ticks propose the offline Vast.ai instance's replacement once REPLACE_AFTER_S has passed, once per death", async () => {
    const { deps, server } = await quietFleet();
    const seenAt = deps.clock.now();
    await runCronTick(deps); // first seen: offline from now (the one event, whose run found it "not yet")
    deps.clock.advance(60_000);
    await runCronTick(deps);
    expect(await asked(deps)).toEqual([]); // not yet

    deps.clock.advance(AFTER_S * 1000);
    await runCronTick(deps);
    expect(await asked(deps)).toEqual([expect.objectContaining({ instanceId: "1", status: "pending" })]);
    expect(await rows(deps)).toEqual([expect.objectContaining({ oldInstanceId: "1", status: "awaiting_approval", decidedBy: "rules" })]);
    // No event brought it: the only one is the first sighting, long before it was due.
    expect((await deps.db.select().from(events)).map((e) => e.createdAt)).toEqual([seenAt]);
    expect(server.created).toEqual([]);

    // The bound: once per death. More ticks file nothing, nor does a human's "no" reopen it.
    for (let i = 0; i < 3; i++) {
      deps.clock.advance(60_000);
      await runCronTick(deps);
    }
    expect(await asked(deps)).toHaveLength(1);
    await decide(deps, "reject");
    for (let i = 0; i < 3; i++) {
      deps.clock.advance(60_000);
      await runCronTick(deps);
    }
    expect(await asked(deps)).toHaveLength(1);
    expect((await rows(deps)).map((r) => r.status)).toEqual(["rejected"]);
  });
});
