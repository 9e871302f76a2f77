/**
 * Vast.ai offers and create against the strict fake (test/fleet/vast-server.ts, vast-market.ts),
 * over real HTTP: the search and create bodies exactly as vast-cli sends them, the filters
 * (machine exclusion, price, reliability, disk) kept even when an answer ignores them, the new
 * instance listed loading then running with what a replacement is made from, create sent once
 * whatever fails after it may have reached Vast.ai, and the fake's refusals.
 */
import { describe, expect, it } from "vitest";
import type { InstanceSpec, Offer, OfferQuery } from "../../fleet/providers/provider.ts";
import { vastOffer } from "./vast-server.ts";
import { providerError, useVastClient } from "./vast-client-fixture.ts";

const KEY = "vast-test-key-offers";
const client = useVastClient(KEY);

const QUERY: OfferQuery = {
  gpuName: "RTX 4090",
  gpuCount: 2,
  minDiskGb: 100,
  maxPricePerHour: 0.9,
  minReliability: 0.98,
  excludeMachineIds: ["112", "113"],
  limit: 5,
};
const SPEC: InstanceSpec = {
  image: "pytorch/pytorch:2.3",
  templateId: null,
  env: { HF_TOKEN: "hf_x", "-p 8080:8080": "1" },
  onstart: "python train.py",
  label: "trainer",
  diskGb: 120,
};
const offerOf = (id: number): Offer => ({
  id: String(id),
  machineId: String(100 + id),
  gpuName: "RTX 4090",
  gpuCount: 2,
  pricePerHour: 0.62,
  diskGb: 200,
  reliability: 0.995,
});

describe("Vast.ai offers, as vast-cli searches", () => {
  it("sends vast-cli's search body, every field in vast-cli's order, as the JSON body of POST /api/v0/bundles/", async () => {
    const { vast, requests } = await client({ offers: [vastOffer(1)] });
    await vast.offers(QUERY);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: "POST",
      path: "/api/v0/bundles/",
      rawQuery: "",
      authorization: `Bearer ${KEY}`,
      contentType: "application/json",
    });
    const body = requests[0]!.body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      "verified",
      "external",
      "rentable",
      "rented",
      "gpu_name",
      "num_gpus",
      "disk_space",
      "dph_total",
      "reliability",
      "machine_id",
      "order",
      "type",
      "limit",
      "allocated_storage",
    ]);
    expect(body).toEqual({
      verified: { eq: true },
      external: { eq: false },
      rentable: { eq: true },
      rented: { eq: false },
      gpu_name: { eq: "RTX 4090" },
      num_gpus: { eq: 2 },
      disk_space: { gte: 100 },
      dph_total: { lte: 0.9 },
      reliability: { gte: 0.98 },
      machine_id: { notin: [112, 113] },
      order: [["dph_total", "asc"]],
      type: "on-demand",
      limit: 5,
      allocated_storage: 100,
    });
  });

  it("leaves out the filters the query does not set; storage defaults to vast-cli's 5 GB", async () => {
    const { vast, requests } = await client({ offers: [] });
    expect(await vast.offers({ ...QUERY, minDiskGb: null, maxPricePerHour: null, minReliability: null, excludeMachineIds: [] })).toEqual(
      [],
    );
    expect(Object.keys(requests[0]!.body as object)).toEqual([
      "verified",
      "external",
      "rentable",
      "rented",
      "gpu_name",
      "num_gpus",
      "order",
      "type",
      "limit",
      "allocated_storage",
    ]);
    expect((requests[0]!.body as Record<string, unknown>).allocated_storage).toBe(5);
  });

  it("answers only offers like the instance, cheapest first: the excluded machine, price, reliability, disk, GPU and rented ones are not", async () => {
    const { vast } = await client({
      offers: [
        vastOffer(1, { dph_total: 0.7 }),
        vastOffer(2, { dph_total: 0.5 }),
        vastOffer(12, { dph_total: 0.3 }), // machine 112: excluded
        vastOffer(4, { dph_total: 0.95 }), // over the price
        vastOffer(5, { dph_total: 0.4, reliability: 0.9, reliability2: 0.9 }),
        vastOffer(6, { dph_total: 0.4, disk_space: 50 }),
        vastOffer(7, { dph_total: 0.4, gpu_name: "RTX 3090" }),
        vastOffer(8, { dph_total: 0.4, num_gpus: 1 }),
        vastOffer(9, { dph_total: 0.4, rented: true, rentable: false }),
      ],
    });
    const offers = await vast.offers(QUERY);
    expect(offers).toEqual([
      { id: "2", machineId: "102", gpuName: "RTX 4090", gpuCount: 2, pricePerHour: 0.5, diskGb: 200, reliability: 0.995 },
      { id: "1", machineId: "101", gpuName: "RTX 4090", gpuCount: 2, pricePerHour: 0.7, diskGb: 200, reliability: 0.995 },
    ]);
  });

  it("an answer that ignores a filter still cannot offer the excluded machine, a pricier, less reliable or smaller one", async () => {
    const all = [
      vastOffer(12, { dph_total: 0.3 }),
      vastOffer(4, { dph_total: 0.95 }),
      vastOffer(5, { reliability2: 0.5 }),
      vastOffer(6, { disk_space: 20 }),
      vastOffer(9, { rented: true }),
      vastOffer(3),
    ];
    const { vast } = await client({ intercept: (req) => (req.path === "/api/v0/bundles/" ? { body: { offers: all } } : undefined) });
    expect((await vast.offers(QUERY)).map((o) => o.id)).toEqual(["3"]);
  });
});

describe("Vast.ai create, as vast-cli rents an offer", () => {
  it("sends vast-cli's create body to PUT /api/v0/asks/{id}/ and answers new_contract; the instance is listed loading, then running, with its machine and spec", async () => {
    const { vast, requests, fake } = await client({ offers: [vastOffer(1)] });
    const created = await vast.create(offerOf(1), SPEC);
    expect(created).toEqual({ id: String(fake.created[0]) });
    const put = requests.find((r) => r.method === "PUT")!;
    expect(put).toMatchObject({ path: "/api/v0/asks/1/", rawQuery: "", contentType: "application/json" });
    expect(put.body).toEqual({
      client_id: "me",
      image: "pytorch/pytorch:2.3",
      env: { HF_TOKEN: "hf_x", "-p 8080:8080": "1" },
      price: null,
      disk: 120,
      label: "trainer",
      extra: null,
      onstart: "python train.py",
      image_login: null,
      python_utf8: false,
      lang_utf8: false,
      use_jupyter_lab: false,
      jupyter_dir: null,
      force: false,
      cancel_unavail: true,
      template_hash_id: null,
      user: null,
      runtype: "ssh",
    });
    expect(fake.offers.get(1)).toMatchObject({ rented: true, rentable: false });

    const [loading] = await vast.list();
    expect(loading).toMatchObject({
      id: created.id,
      state: "loading",
      machineId: "101",
      diskGb: 120,
      reliability: 0.995,
      label: "trainer",
    });
    expect(loading!.spec).toEqual({ ...SPEC, templateId: null });
    fake.boot(Number(created.id));
    expect((await vast.get(created.id))!.state).toBe("running");
  });

  it("from a template: the hash is sent, no runtype (vast-cli leaves it to the template), and the image may be absent", async () => {
    const { vast, requests } = await client({ offers: [vastOffer(1)] });
    await vast.create(offerOf(1), { image: null, templateId: "661d064bbda1f2a133816b6d55da07c3", env: {}, label: null, diskGb: null });
    const body = requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ image: null, template_hash_id: "661d064bbda1f2a133816b6d55da07c3", disk: 200, onstart: null, env: {} });
    expect(body).not.toHaveProperty("runtype");
  });

  it("with neither image nor template nothing is sent", async () => {
    const { vast, requests } = await client({ offers: [vastOffer(1)] });
    expect((await providerError(vast.create(offerOf(1), { ...SPEC, image: null }))).status).toBe(400);
    expect(requests).toEqual([]);
  });

  it("a second create on the same offer fails as Vast answers (404 no_such_ask), and so does an unknown offer; one instance exists", async () => {
    const { vast, fake } = await client({ offers: [vastOffer(1)] });
    await vast.create(offerOf(1), SPEC);
    const again = await providerError(vast.create(offerOf(1), SPEC));
    expect(again).toMatchObject({ status: 404, retryable: false });
    expect(again.message).toContain("no_such_ask Instance type by id 1 is not available");
    expect((await providerError(vast.create(offerOf(77), SPEC))).status).toBe(404);
    expect(fake.created).toHaveLength(1);
  });
});
