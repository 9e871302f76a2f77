/**
 * Trying more than the cheapest offer (issue #33 item 3, fleet/replacement/replacement-create.ts),
 * against the strict Vast.ai test server: an offer taken between search and create (Vast.ai's 404
 * `no_such_ask`) moves on to the next, up to REPLACE_MAX_OFFERS, each attempt recorded on the row;
 * a 429 on create is "not created" (back to approved, tried again after a doubling backoff, at
 * most MAX_RATE_LIMITED times, no 900 s marker wait); a malformed 2xx answer is "maybe rented".
 */
import { afterEach, describe, expect, it } from "vitest";
import { instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, vastOffer, type SeenRequest, type VastServer } from "../fleet/vast-server.ts";
import { AFTER_S, decide, rows, tick } from "./support.ts";
import { MAX_RATE_LIMITED, RATE_LIMIT_BACKOFF_MS } from "../../fleet/replacement/replacement-create.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const createOf = (req: SeenRequest) => req.path.match(/^\/api\/v0\/asks\/(\d+)\/$/)?.[1];
const noSuchAsk = (id: string) => ({
  status: 404,
  body: {
    success: false,
    error: "invalid_args",
    msg: `error 404/3603: no_such_ask Instance type by id ${id} is not available.`,
    ask_id: Number(id),
  },
});

/** An approved replacement of Vast.ai instance 1 ($0.60/h), offers 2–4 fitting, 1 on its own machine. */
async function approved(
  intercept: (req: SeenRequest) => ReturnType<typeof noSuchAsk> | { status: number; body: unknown } | undefined,
  vars: Record<string, string> = {},
) {
  const apiKey = "vast-test-key-offers";
  const server = await startVastServer({
    apiKey,
    instances: [
      vastInstance(1, {
        actual_status: "offline",
        cur_state: "stopped",
        machine_id: 101,
        num_gpus: 2,
        dph_total: 0.6,
        disk_space: 100,
        image_uuid: "pytorch/pytorch:2.3",
      }),
    ],
    offers: [
      vastOffer(1, { dph_total: 0.5 }),
      vastOffer(2, { dph_total: 0.62 }),
      vastOffer(3, { dph_total: 0.65 }),
      vastOffer(4, { dph_total: 0.7 }),
    ],
    intercept,
  });
  servers.push(server);
  const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
  const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey, ...vars } });
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
  return { deps, server };
}

describe("replacement offers", () => {
  it("moves on from offers taken before the create to the next fitting one, each attempt recorded", async () => {
    const { deps, server } = await approved((req) => {
      const id = createOf(req);
      return id === "2" || id === "3" ? noSuchAsk(id) : undefined;
    });
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    expect(server.created).toHaveLength(1);
    const [row] = await rows(deps);
    expect(row).toMatchObject({ status: "waiting", newInstanceId: String(server.created[0]), offer: expect.objectContaining({ id: "4" }) });
    expect((row!.attempts as { offerId: string; outcome: string }[]).map((a) => [a.offerId, a.outcome])).toEqual([
      ["2", "taken"],
      ["3", "taken"],
      ["4", "created"],
    ]);
  });

  it("tries at most REPLACE_MAX_OFFERS offers, then fails with nothing rented", async () => {
    const { deps, server } = await approved(
      (req) => {
        const id = createOf(req);
        return id ? noSuchAsk(id) : undefined;
      },
      { REPLACE_MAX_OFFERS: "2" },
    );
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    expect(server.created).toEqual([]);
    const [row] = await rows(deps);
    expect(row!.status).toBe("failed");
    expect((row!.attempts as { offerId: string }[]).map((a) => a.offerId)).toEqual(["2", "3"]);
    expect(row!.error).toMatch(/every offer tried was taken/);
  });

  it("a 429 on create is not created: the next tick tries again instead of waiting on the marker", async () => {
    let limited = true;
    const { deps, server } = await approved((req) =>
      createOf(req) && limited ? { status: 429, body: { error: "rate_limited" } } : undefined,
    );
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    expect((await rows(deps))[0]).toMatchObject({ status: "approved", createAttemptedAt: null });
    limited = false;
    // The backoff: nothing is sent before RATE_LIMIT_BACKOFF_MS has passed since the 429 (Vast.ai's
    // client repeats a 429 itself within one create, so its requests are counted per attempt).
    const creates = async () => ((await rows(deps))[0]!.attempts as unknown[]).length;
    deps.clock.advance(RATE_LIMIT_BACKOFF_MS - 1_000);
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    expect(await creates()).toBe(1);
    deps.clock.advance(1_000);
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    expect(server.created).toHaveLength(1);
    expect(((await rows(deps))[0]!.attempts as { outcome: string }[]).map((a) => a.outcome)).toEqual(["rate_limited", "created"]);
  });

  it("429s back off, doubling, and stop after MAX_RATE_LIMITED with nothing rented", async () => {
    const { deps, server } = await approved((req) => (createOf(req) ? { status: 429, body: { error: "rate_limited" } } : undefined));
    const creates = async () => ((await rows(deps))[0]!.attempts as unknown[]).length;
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    deps.clock.advance(RATE_LIMIT_BACKOFF_MS);
    await tick(deps);
    expect(await creates()).toBe(2);
    deps.clock.advance(RATE_LIMIT_BACKOFF_MS); // the second wait is twice the first
    await tick(deps);
    expect(await creates()).toBe(2);
    deps.clock.advance(RATE_LIMIT_BACKOFF_MS);
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    expect(await creates()).toBe(MAX_RATE_LIMITED);
    expect(server.created).toEqual([]);
    expect((await rows(deps))[0]!.error).toMatch(/rate-limited the create 3 times/);
  });

  it("a malformed 2xx answer to the create is maybe rented: never sent again, resolved by the marker only", async () => {
    const { deps, server } = await approved((req) => (createOf(req) ? { status: 200, body: { success: true } } : undefined));
    const creates = () => server.requests.filter((r) => createOf(r)).length;
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    const [row] = await rows(deps);
    expect(row).toMatchObject({ status: "creating" });
    expect((row!.attempts as { outcome: string }[]).map((a) => a.outcome)).toEqual(["maybe_rented"]);
    deps.clock.advance(60_000);
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    expect(creates()).toBe(1);
    deps.clock.advance(3_600_000);
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    expect(creates()).toBe(1);
    expect((await rows(deps))[0]!.error).toMatch(/no instance carries its marker/);
  });
});
