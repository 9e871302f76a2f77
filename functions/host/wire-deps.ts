/**
 * Chooses the adapters named by the configuration (fleet provider, LLM, run step) and assembles
 * the dependencies. Shared by both hosts; each host brings what only it can make (the database
 * client, the scheduler, the clock).
 */
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { Config } from "../../runtime/config.ts";
import type { Deps } from "../../runtime/deps.ts";
import type { Logger } from "../../runtime/log.ts";
import type { Scheduler } from "../../triggers/scheduler.ts";
import { minimalRunStep } from "../../triggers/run-step.ts";
import { SimulatorProvider } from "../../fleet/simulator.ts";

export interface HostParts {
  db: Db;
  clock: Clock;
  config: Config;
  scheduler: Scheduler;
  log: Logger;
}

export function wireDeps(parts: HostParts): Deps {
  return {
    ...parts,
    provider: new SimulatorProvider(parts.db, parts.clock),
    llm: null,
    runStep: minimalRunStep,
  };
}
