import { describe } from "vitest";
import { startNodeScenarioHost } from "../scenarios/hosts.ts";
import { defineOtelScenario } from "./otel-scenario.ts";

// Traces from the Node host (test/otel/otel-scenario.ts).
describe("traces on the Node host", { timeout: 60_000 }, () => {
  defineOtelScenario(startNodeScenarioHost);
});
