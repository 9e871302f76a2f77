import { describe, expect } from "vitest";
import { summariseCosts, type ScenarioHost } from "./driver.ts";
import { startWorkerScenarioHost } from "./hosts.ts";
import { defineScenarios } from "./scenarios.ts";

/** Cloudflare's free plan allows 50 subrequests per invocation. */
const FREE_PLAN_SUBREQUESTS = 50;

/** Prints what each kind of Worker invocation cost in subrequests (database, QStash, LLM). */
function reportSubrequests(host: ScenarioHost) {
  const summary = summariseCosts(host.costs);
  console.log(
    `Worker subrequests per invocation (scenario suite, 3 simulated instances; 210 in the last scenario):\n${JSON.stringify(summary, null, 1)}`,
  );
  for (const row of summary) expect(row.subrequestsMax, row.label).toBeLessThan(FREE_PLAN_SUBREQUESTS);
}

// Generous per-test timeouts: workerd over loopback on a shared machine; nothing here is timed.
describe("shared scenarios on the Worker in workerd (Turso via the Hrana test server, QStash fake)", { timeout: 90_000 }, () => {
  defineScenarios(startWorkerScenarioHost, reportSubrequests);
});
