import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ingestEvent } from "../../pipeline/index.ts";
import { defaultFlowPrefix, qstashSchedulerFromConfig, QStashScheduler, toQStashId } from "../../pipeline/index.ts";
import { testConfig } from "../support/test-deps.ts";
import { startFakeQStash, TEST_PUBLIC_URL, TEST_QSTASH_TOKEN, type FakeQStash } from "./fake-qstash.ts";
import { createQStashDeps, qstashVars } from "./qstash-deps.ts";

let fake: FakeQStash;
beforeEach(async () => {
  fake = await startFakeQStash();
});
afterEach(async () => {
  await fake.close();
});

const scheduler = (token = TEST_QSTASH_TOKEN) =>
  new QStashScheduler({ token, publicUrl: `${TEST_PUBLIC_URL}/`, baseUrl: fake.baseUrl, retries: 3, flowPrefix: "stage" });

describe("QStashScheduler publishes through the QStash publish API", () => {
  it("sends the destination, token, notBefore, dedup id, retries and per-agent flow control", async () => {
    const notBefore = Date.UTC(2026, 10, 29, 12, 0, 0, 250);
    await scheduler().publish({ dedupKey: "run:default:7", notBefore, body: { type: "run", agentId: "default", slot: 7 } });

    expect(fake.messages).toHaveLength(1);
    const [message] = fake.messages;
    expect(message!.destination).toBe(`${TEST_PUBLIC_URL}/internal/deliveries`);
    expect(message!.headers.authorization).toBe(`Bearer ${TEST_QSTASH_TOKEN}`);
    expect(message!.headers["content-type"]).toBe("application/json");
    // seconds, rounded up so the message never arrives before notBefore
    expect(message!.headers["upstash-not-before"]).toBe(String(Math.ceil(notBefore / 1000)));
    expect(message!.headers["upstash-deduplication-id"]).toBe("stage_3arun_3adefault_3a7");
    expect(message!.headers["upstash-retries"]).toBe("3");
    expect(message!.headers["upstash-flow-control-key"]).toBe("stage-agent-default");
    expect(message!.headers["upstash-flow-control-value"]).toBe("parallelism=1");
    expect(message!.headers["upstash-method"]).toBe("POST");
    expect(JSON.parse(message!.body)).toEqual({ type: "run", agentId: "default", slot: 7 });
  });

  it("gives each agent's notifications their own flow-control key, apart from its runs", async () => {
    await scheduler().publish({ dedupKey: "notify:12", notBefore: 0, body: { type: "notify", agentId: "default", deliveryId: 12 } });
    await scheduler().publish({ dedupKey: "notify:13", notBefore: 0, body: { type: "notify", agentId: "gpu-east", deliveryId: 13 } });
    expect(fake.messages.map((m) => m.headers["upstash-flow-control-key"])).toEqual(["stage-notify-default", "stage-notify-gpu-east"]);
  });

  it("prefixes flow-control keys and deduplication ids per deployment: a short hash of PUBLIC_URL by default, QSTASH_FLOW_PREFIX when set", async () => {
    const body = { type: "run", agentId: "default", slot: 1 } as const;
    const production = qstashSchedulerFromConfig(testConfig({ ...qstashVars(fake), PUBLIC_URL: "https://fleet.example.com" }));
    const staging = qstashSchedulerFromConfig(testConfig({ ...qstashVars(fake), PUBLIC_URL: "https://staging.fleet.example.com" }));
    const named = qstashSchedulerFromConfig(testConfig({ ...qstashVars(fake), QSTASH_FLOW_PREFIX: "prod-eu" }));
    await production.publish({ dedupKey: "a", notBefore: 0, body });
    await staging.publish({ dedupKey: "b", notBefore: 0, body });
    await named.publish({ dedupKey: "c", notBefore: 0, body });
    const keys = fake.messages.map((m) => m.headers["upstash-flow-control-key"]);
    // Deduplication ids carry the same prefix: one key published by two deployments is two messages.
    await staging.publish({ dedupKey: "a", notBefore: 0, body });
    expect(fake.messages).toHaveLength(4);
    const ids = fake.messages.map((m) => m.headers["upstash-deduplication-id"]);
    expect(ids[0]).toBe(`${defaultFlowPrefix("https://fleet.example.com")}_3aa`);
    expect(ids[3]).toBe(`${defaultFlowPrefix("https://staging.fleet.example.com")}_3aa`);
    expect(ids[2]).toBe("prod-eu_3ac");
    expect(keys[0]).toBe(`${defaultFlowPrefix("https://fleet.example.com")}-agent-default`);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-agent-default$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[2]).toBe("prod-eu-agent-default");
    expect(defaultFlowPrefix("https://fleet.example.com/")).toBe(defaultFlowPrefix("https://fleet.example.com"));
    expect(() => testConfig({ ...qstashVars(fake), QSTASH_FLOW_PREFIX: "has space" })).toThrow(/QSTASH_FLOW_PREFIX/);
  });

  it("a repeated dedup key is sent with the same id, so QStash enqueues it once", async () => {
    const request = { dedupKey: "wake:default:3", notBefore: 0, body: { type: "wake", agentId: "default", wakeId: 3 } as const };
    await scheduler().publish(request);
    await scheduler().publish(request);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]!.headers["upstash-deduplication-id"]).toBe(fake.requests[1]!.headers["upstash-deduplication-id"]);
    expect(fake.messages).toHaveLength(1);
  });

  it("publishMany sends one batch request per 100 messages, each message with the headers a publish has", async () => {
    const requests = Array.from({ length: 150 }, (_, i) => ({
      dedupKey: `tick:agent-${i}:42`,
      notBefore: 2_000_500,
      body: { type: "tick", agentId: `agent-${i}` } as const,
    }));
    await scheduler().publishMany(requests);
    expect(fake.requests.map((r) => [r.destination, r.status])).toEqual([
      ["(batch)", 200],
      ["(batch)", 200],
    ]);
    expect(fake.messages).toHaveLength(150);
    const last = fake.messages[149]!;
    expect(last.destination).toBe(`${TEST_PUBLIC_URL}/internal/deliveries`);
    expect(JSON.parse(last.body)).toEqual({ type: "tick", agentId: "agent-149" });
    expect(last.headers["upstash-deduplication-id"]).toBe("stage_3atick_3aagent-149_3a42");
    expect(last.headers["upstash-not-before"]).toBe("2001");
    expect(last.headers["upstash-flow-control-key"]).toBe("stage-agent-agent-149");
    expect(last.headers["upstash-retries"]).toBe("3");
    // the same fan-out again within the window is deduplicated by QStash
    await scheduler().publishMany(requests.slice(0, 3));
    expect(fake.messages).toHaveLength(150);
    fake.failWith = 500;
    await expect(scheduler().publishMany(requests.slice(0, 1))).rejects.toThrow();
  });

  it("a QStash error or a bad token fails the publish instead of losing it silently", async () => {
    fake.failWith = 500;
    await expect(
      scheduler().publish({ dedupKey: "a", notBefore: 0, body: { type: "notify", agentId: "default", deliveryId: 1 } }),
    ).rejects.toThrow();
    fake.failWith = null;
    await expect(
      scheduler("wrong-token").publish({ dedupKey: "b", notBefore: 0, body: { type: "notify", agentId: "default", deliveryId: 1 } }),
    ).rejects.toThrow();
    expect(fake.messages).toHaveLength(0);
  });

  it("the pipeline publishes a debounced run through it", async () => {
    const deps = await createQStashDeps(fake);
    const now = deps.clock.now();
    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "msg-1", payload: { text: "hi" } });
    expect(fake.messages).toHaveLength(1);
    const [message] = fake.messages;
    expect(JSON.parse(message!.body)).toMatchObject({ type: "run", agentId: "default" });
    expect(Number(message!.headers["upstash-not-before"])).toBe(Math.ceil((now + deps.config.debounceHumanMs) / 1000));
    expect(message!.headers["upstash-retries"]).toBe(String(deps.config.qstash.retries));
  });
});

describe("toQStashId", () => {
  it("keeps only letters, digits, '-' and '_' and never maps two keys to one id", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), async (a, b) => {
        const [idA, idB] = [await toQStashId(a), await toQStashId(b)];
        expect(idA).toMatch(/^[A-Za-z0-9_-]*$/);
        if (a !== b) expect(idA).not.toBe(idB);
      }),
    );
  });

  it("hashes keys too long for a header id", async () => {
    const id = await toQStashId(`run:${"x".repeat(200)}`);
    expect(id).toMatch(/^h-[0-9a-f]{64}$/);
  });
});
