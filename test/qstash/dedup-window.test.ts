import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { listRuns } from "../../pipeline/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import type { PublishRequest } from "../../pipeline/index.ts";
import { DEDUP_WINDOW_MS, deliveryRequest, startFakeQStash, type FakeQStash } from "./fake-qstash.ts";
import { createQStashDeps } from "./qstash-deps.ts";

let fake: FakeQStash;
beforeEach(async () => {
  fake = await startFakeQStash();
});
afterEach(async () => {
  await fake.close();
});

/**
 * QStash forgets a deduplication id after 10 minutes, so a publish repeated later (a cron repair,
 * a retried request) is delivered again. The scheduler contract says nothing may rely on longer:
 * these replay a delivery past the window and check that it changes nothing.
 */
describe("nothing relies on QStash dedup lasting longer than 10 minutes", () => {
  async function setup() {
    const deps = await createQStashDeps(fake);
    fake.now = () => deps.clock.now();
    const app = buildApp(() => deps);
    const deliver = async () => {
      const due = fake.messages.filter((m) => m.state === "pending" && m.nextAttemptAt <= deps.clock.now());
      const results: string[] = [];
      for (const m of due) {
        m.state = "delivered";
        const res = await app.request(deliveryRequest(m));
        results.push((await res.json()).result);
      }
      return results;
    };
    return { deps, deliver };
  }

  it("a run delivery repeated after the window finds its slot claimed and runs nothing", async () => {
    const { deps, deliver } = await setup();
    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "status?" } });
    const [published] = fake.messages;
    deps.clock.advance(deps.config.debounceHumanMs + 1000); // Not-Before is whole seconds, rounded up
    expect(await deliver()).toEqual(["succeeded"]);

    deps.clock.advance(DEDUP_WINDOW_MS + 60_000);
    const again: PublishRequest = { dedupKey: "run:default:1", notBefore: deps.clock.now(), body: JSON.parse(published!.body) };
    await deps.scheduler.publish(again);
    expect(fake.messages).toHaveLength(2); // QStash no longer remembers the id
    deps.clock.advance(1000);
    expect(await deliver()).toEqual(["stale"]);
    expect(await listRuns(deps, "default", 10)).toHaveLength(1);
  });
});
