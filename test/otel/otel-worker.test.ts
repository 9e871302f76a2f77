import { describe } from "vitest";
import { startWorkerScenarioHost } from "../scenarios/hosts.ts";
import { defineOtelScenario } from "./otel-scenario.ts";

// Traces from the Worker in workerd (test/otel/otel-scenario.ts): the export goes through `fetch`, kept alive by `waitUntil`.
describe("traces on the Worker in workerd", { timeout: 120_000 }, () => {
  defineOtelScenario(startWorkerScenarioHost);
});
