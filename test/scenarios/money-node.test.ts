import { describe } from "vitest";
import { startNodeScenarioHost } from "./hosts.ts";
import { defineMoneyScenario } from "./money-scenario.ts";

// The money scenario (issue #33) on the Node host, the rules policy deciding (no LLM configured).
describe("money scenario on the Node host", { timeout: 120_000 }, () => {
  defineMoneyScenario(startNodeScenarioHost);
});
