/**
 * Create is not idempotent (a second rental is a second bill): against the strict fake counting
 * every request, a create is repeated only when Vast.ai cannot have acted on it — a refused
 * connection or a 429 — and every other failure, a 500, a gateway error, a reset connection, an
 * answer that does not parse, is one request and an error that is not retryable. The offer search is a read,
 * retried as reads are.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { InstanceSpec, Offer } from "../../fleet/providers/provider.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { vastOffer } from "./vast-server.ts";
import { providerError, useVastClient } from "./vast-client-fixture.ts";

const client = useVastClient("vast-test-key-create");
const SPEC: InstanceSpec = { image: "pytorch/pytorch", env: {}, label: "trainer", diskGb: 40 };
const OFFER: Offer = { id: "1", machineId: "101", gpuName: "RTX 4090", gpuCount: 2, pricePerHour: 0.62, diskGb: 200, reliability: 0.995 };
const isCreate = (path: string) => path === "/api/v0/asks/1/";

/** A loopback port nobody listens on: connecting to it is refused before anything is sent. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((ready) => probe.listen(0, "127.0.0.1", ready));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

describe("Vast.ai create is sent once unless Vast.ai cannot have acted", () => {
  it("a create answered 500, 502, 503 or 504 is sent once and is not retryable; nothing is rented twice", async () => {
    for (const status of [500, 502, 503, 504]) {
      const { vast, requests, slept } = await client({
        offers: [vastOffer(1)],
        intercept: (req) => (isCreate(req.path) ? { status, body: { error: "server_error" } } : undefined),
      });
      const err = await providerError(vast.create(OFFER, SPEC));
      expect(err, String(status)).toMatchObject({ status, retryable: false });
      expect(err.message).toContain("not retried");
      expect(requests, String(status)).toHaveLength(1);
      expect(slept).toEqual([]);
    }
  });

  it("a create answered 2xx with something that is not JSON (Vast may have acted) is not sent again", async () => {
    const { vast, requests } = await client({ offers: [vastOffer(1)], intercept: () => ({ status: 200, raw: "<html>" }) });
    const err = await providerError(vast.create(OFFER, SPEC));
    expect(err.retryable).toBe(false);
    expect(requests).toHaveLength(1);
  });

  it("a 2xx without new_contract is an error, not a retry", async () => {
    const { vast, requests } = await client({ offers: [vastOffer(1)], intercept: () => ({ body: { success: true } }) });
    expect(await providerError(vast.create(OFFER, SPEC))).toMatchObject({ status: 502, retryable: false });
    expect(requests).toHaveLength(1);
  });

  it("a 429 is repeated (the rate limit answers before anything is rented) and the offer is rented once", async () => {
    const { vast, requests, fake } = await client({
      offers: [vastOffer(1)],
      intercept: (req, i) =>
        isCreate(req.path) && i === 0 ? { status: 429, body: { detail: "API requests too frequent endpoint threshold=4.5" } } : undefined,
    });
    const created = await vast.create(OFFER, SPEC);
    expect(requests).toHaveLength(2);
    expect(fake.created).toEqual([Number(created.id)]);
  });

  it("a refused connection is repeated; any other network failure is not", async () => {
    const { fake } = await client({ offers: [vastOffer(1)] });
    const refusedUrl = `http://127.0.0.1:${await closedPort()}`;
    let calls = 0;
    const firstRefused: typeof fetch = (input, init) =>
      calls++ === 0 ? fetch(String(input).replace(fake.url, refusedUrl), init) : fetch(input, init);
    const vast = new VastProvider({ apiKey: "vast-test-key-create", baseUrl: fake.url, fetch: firstRefused, sleep: async () => {} });
    await vast.create(OFFER, SPEC);
    expect(calls).toBe(2);
    expect(fake.created).toHaveLength(1);

    let resets = 0;
    const reset: typeof fetch = async () => {
      resets++;
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
    };
    const broken = new VastProvider({ apiKey: "vast-test-key-create", baseUrl: fake.url, fetch: reset, sleep: async () => {} });
    expect((await providerError(broken.create({ ...OFFER, id: "2" }, SPEC))).retryable).toBe(false);
    expect(resets).toBe(1);
  });

  it("the offer search is a read: a 502 is repeated, a 500 is not", async () => {
    const flaky = await client({
      offers: [vastOffer(1)],
      intercept: (_req, i) => (i === 0 ? { status: 502, raw: "bad gateway" } : undefined),
    });
    expect(
      await flaky.vast.offers({
        gpuName: "RTX 4090",
        gpuCount: 2,
        minDiskGb: null,
        maxPricePerHour: null,
        minReliability: null,
        excludeMachineIds: [],
        limit: 3,
      }),
    ).toHaveLength(1);
    expect(flaky.requests).toHaveLength(2);
    const broken = await client({ offers: [vastOffer(1)], intercept: () => ({ status: 500, body: { error: "server_error" } }) });
    expect(
      (
        await providerError(
          broken.vast.offers({
            gpuName: "RTX 4090",
            gpuCount: 2,
            minDiskGb: null,
            maxPricePerHour: null,
            minReliability: null,
            excludeMachineIds: [],
            limit: 3,
          }),
        )
      ).status,
    ).toBe(500);
    expect(broken.requests).toHaveLength(1);
  });
});
