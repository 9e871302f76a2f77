/**
 * The last step every provider's `offers` shares (fleet/providers/provider.ts cheapestWithin): the query's
 * price cap, cheapest first with ties broken by id (the same answer always picks the same offer),
 * at most the query's limit; and the whole query's re-check that Vast.ai and the simulator share
 * (meetingQuery).
 */
import { describe, expect, it } from "vitest";
import { cheapestWithin, meetingQuery, type Offer, type OfferQuery } from "../../fleet/providers/provider.ts";

const offer = (id: string, pricePerHour: number): Offer => ({
  id,
  machineId: null,
  gpuName: "RTX 4090",
  gpuCount: 1,
  pricePerHour,
  diskGb: null,
  reliability: null,
});

describe("cheapestWithin", () => {
  const offers = [offer("c", 0.5), offer("b", 0.4), offer("a", 0.4), offer("d", 0.9)];

  it("keeps offers within the price cap, cheapest first, ties by id, at most the limit", () => {
    expect(cheapestWithin(offers, { maxPricePerHour: 0.5, limit: 10 }).map((o) => o.id)).toEqual(["a", "b", "c"]);
    expect(cheapestWithin(offers, { maxPricePerHour: 0.5, limit: 2 }).map((o) => o.id)).toEqual(["a", "b"]);
  });

  it("with no cap keeps every price; a limit of 0 keeps none", () => {
    expect(cheapestWithin(offers, { maxPricePerHour: null, limit: 10 }).map((o) => o.id)).toEqual(["a", "b", "c", "d"]);
    expect(cheapestWithin(offers, { maxPricePerHour: null, limit: 0 })).toEqual([]);
  });
});

describe("meetingQuery", () => {
  const query: OfferQuery = {
    gpuName: "RTX 4090",
    gpuCount: 1,
    minDiskGb: 100,
    maxPricePerHour: 0.8,
    minReliability: 0.95,
    excludeMachineIds: ["m-dead"],
    limit: 10,
  };
  const good = (id: string, pricePerHour: number, more: Partial<Offer> = {}): Offer => ({
    ...offer(id, pricePerHour),
    machineId: `m-${id}`,
    diskGb: 200,
    reliability: 0.99,
    ...more,
  });

  it("keeps only offers meeting every filter, cheapest within the cap; an unknown disk or reliability counts as none", () => {
    const offers = [
      good("ok-dear", 0.7),
      good("ok", 0.5),
      good("no-machine", 0.6, { machineId: null }),
      good("model", 0.1, { gpuName: "RTX 3090" }),
      good("count", 0.1, { gpuCount: 2 }),
      good("dead", 0.1, { machineId: "m-dead" }),
      good("disk", 0.1, { diskGb: 50 }),
      good("no-disk", 0.1, { diskGb: null }),
      good("flaky", 0.1, { reliability: 0.9 }),
      good("no-score", 0.1, { reliability: null }),
      good("too-dear", 0.9),
    ];
    expect(meetingQuery(offers, query).map((o) => o.id)).toEqual(["ok", "no-machine", "ok-dear"]);
    expect(meetingQuery(offers, { ...query, minDiskGb: null, minReliability: null }).map((o) => o.id)).toEqual([
      "disk",
      "flaky",
      "no-disk",
      "no-score",
      "ok",
      "no-machine",
      "ok-dear",
    ]);
  });
});
