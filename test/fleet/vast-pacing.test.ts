/**
 * Vast.ai's rate limits as documented: "enforced as a minimum interval between requests for a
 * given endpoint and identity", answered 429 "API requests too frequent: endpoint threshold=…"
 * with no Retry-After (vast-ai/docs c624622622496828c1ae58edec481bba1f5d675d
 * api-reference/rate-limits-and-errors.mdx), the interval per endpoint in its OpenAPI
 * `x-rate-limit.threshold`: 1.0 s for `GET /api/v1/instances/` (api-reference/openapi/yaml/
 * show_instances.yaml) and 4.5 s for create, `PUT /api/v0/asks/{id}/` (create_instance.yaml).
 * Against the fake made strict about it (`pacing`: one clock shared by the fake and the client's
 * sleep), a list of several pages earns no 429, two creates in a row earn none, and a create
 * answered 429 is repeated only after the create interval.
 */
import { describe, expect, it } from "vitest";
import type { InstanceSpec, Offer } from "../../fleet/providers/provider.ts";
import { VAST_CREATE_INTERVAL_MS, VAST_LIST_INTERVAL_MS } from "../../fleet/providers/vast.ts";
import { useVastClient } from "./vast-client-fixture.ts";
import { vastInstance, vastOffer } from "./vast-server.ts";

const client = useVastClient("vast-test-key-pacing");
const SPEC: InstanceSpec = { image: "pytorch/pytorch", env: {}, label: "trainer", diskGb: 40 };
const offer = (id: number): Offer => ({
  id: String(id),
  machineId: String(100 + id),
  gpuName: "RTX 4090",
  gpuCount: 2,
  pricePerHour: 0.62,
  diskGb: 200,
  reliability: 0.995,
});

/** A clock the client's sleep moves (no real waiting) and the fake reads. */
function virtualClock() {
  let t = 1_000_000;
  return { now: () => t, sleep: async (ms: number) => void (t += ms) };
}

describe("Vast.ai paced as documented", () => {
  it("the documented intervals", () => {
    expect(VAST_LIST_INTERVAL_MS).toBe(1_000);
    expect(VAST_CREATE_INTERVAL_MS).toBe(4_500);
  });

  it("a list of three pages earns no 429: each page waits the list interval", async () => {
    const clock = virtualClock();
    const { vast, requests, fake } = await client(
      { instances: Array.from({ length: 60 }, (_, i) => vastInstance(i + 1)), pacing: { now: clock.now } },
      { now: clock.now, sleep: clock.sleep },
    );
    expect(await vast.list()).toHaveLength(60);
    expect(requests.filter((r) => r.path === "/api/v1/instances/")).toHaveLength(3);
    expect(fake.tooFast).toBe(0);
    // And the next list right after it too.
    expect(await vast.list()).toHaveLength(60);
    expect(fake.tooFast).toBe(0);
  });

  it("the strict fake answers a page asked too soon with Vast's 429", async () => {
    const clock = virtualClock();
    const { vast, fake } = await client(
      { instances: Array.from({ length: 30 }, (_, i) => vastInstance(i + 1)), pacing: { now: clock.now } },
      { now: () => clock.now() + 10_000_000, sleep: async () => {}, maxAttempts: 1 },
    );
    await expect(vast.list()).rejects.toThrow(/429.*too frequent/);
    expect(fake.tooFast).toBe(1);
  });

  it("two creates in a row earn no 429, and a create answered 429 is repeated after the create interval", async () => {
    const clock = virtualClock();
    let first = true;
    const { vast, fake } = await client(
      {
        offers: [vastOffer(1), vastOffer(2), vastOffer(3)],
        pacing: { now: clock.now },
        intercept: (req) => {
          if (req.path !== "/api/v0/asks/3/" || !first) return undefined;
          first = false;
          return { status: 429, raw: "API requests too frequent: endpoint threshold=4.5" };
        },
      },
      { now: clock.now, sleep: clock.sleep },
    );
    await vast.create(offer(1), SPEC);
    await vast.create(offer(2), SPEC);
    expect(fake.tooFast).toBe(0);
    await vast.create(offer(3), SPEC);
    expect(fake.tooFast).toBe(0);
    expect(fake.created).toHaveLength(3);
  });
});
