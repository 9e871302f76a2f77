import { describe, expect } from "vitest";
import { summariseCosts, type ScenarioHost } from "./driver.ts";
import { startWorkerScenarioHost } from "./hosts.ts";
import { defineMoneyScenario } from "./money-scenario.ts";

/** Cloudflare's free plan allows 50 subrequests per invocation. */
const FREE_PLAN_SUBREQUESTS = 50;

function underFreePlan(host: ScenarioHost) {
  for (const row of summariseCosts(host.costs)) expect(row.subrequestsMax, row.label).toBeLessThan(FREE_PLAN_SUBREQUESTS);
}

// The money scenario (issue #33) on the Worker in workerd, the rules policy deciding (no LLM
// configured); every invocation it measured stays under the free plan's subrequests.
describe("money scenario on the Worker in workerd", { timeout: 120_000 }, () => {
  defineMoneyScenario(startWorkerScenarioHost, underFreePlan);
});
