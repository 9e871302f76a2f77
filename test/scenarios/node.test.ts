import { describe } from "vitest";
import { startNodeScenarioHost } from "./hosts.ts";
import { defineScenarios } from "./scenarios.ts";

// Generous per-test timeouts: real hosts over loopback on a shared machine; nothing here is timed.
describe("shared scenarios on the Node host", { timeout: 90_000 }, () => {
  defineScenarios(startNodeScenarioHost);
});
