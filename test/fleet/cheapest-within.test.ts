/**
 * The last step every provider's `offers` shares (fleet/providers/provider.ts cheapestWithin): the query's
 * price cap, cheapest first with ties broken by id (the same answer always picks the same offer),
 * at most the query's limit.
 */
import { describe, expect, it } from "vitest";
import { cheapestWithin, type Offer } from "../../fleet/providers/provider.ts";

const offer = (id: string, pricePerHour: number): Offer => ({ id, machineId: null, gpuName: "RTX 4090", gpuCount: 1, pricePerHour, diskGb: null, reliability: null });

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
