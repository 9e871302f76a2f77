/**
 * The snapshot's "NEEDS ATTENTION" marker uses the same price-scaled loading timeout as the stuck
 * escalation (fleet/instances/overdue-states.ts loadingTimeoutFor): a dear rental stuck loading is
 * marked as soon as it is escalated, a cheap one only past LOADING_TIMEOUT_S.
 */
import { describe, expect, it } from "vitest";
import { attentionMarker } from "../../agent/prompt/prompt-attention.ts";

const TIMEOUT_MS = 900_000;
const loading = (pricePerHour: number) => ({ state: "loading", stateAt: 0, pricePerHour }) as Parameters<typeof attentionMarker>[0];

describe("attention marker of a rental stuck loading", () => {
  it("marks a $24/h rental after 6 minutes (its timeout scales down to 5 minutes)", () => {
    expect(attentionMarker(loading(24), 6 * 60_000, TIMEOUT_MS)).toContain("NEEDS ATTENTION");
  });

  it("leaves a $0.40/h rental unmarked until LOADING_TIMEOUT_S", () => {
    expect(attentionMarker(loading(0.4), 6 * 60_000, TIMEOUT_MS)).toBe("");
    expect(attentionMarker(loading(0.4), TIMEOUT_MS + 1000, TIMEOUT_MS)).toContain("NEEDS ATTENTION");
  });
});
