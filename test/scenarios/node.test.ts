import { describe } from "vitest";
import { startNodeScenarioHost } from "./hosts.ts";
import { defineScenarios } from "./scenarios.ts";

describe("shared scenarios on the Node host", () => {
  defineScenarios(startNodeScenarioHost);
});
