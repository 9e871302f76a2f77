/**
 * Chooses the adapters named by the configuration (fleet provider, LLM, run step) and assembles
 * the dependencies. Shared by both hosts; each host brings what only it can make (the database
 * client, the scheduler, the clock). The scheduler is wrapped so that its refusals are recorded
 * (pipeline/scheduler-health.ts) on both hosts alike.
 */
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { Config } from "../../runtime/config.ts";
import type { Deps } from "../../jobs/deps.ts";
import type { Logger } from "../../runtime/log.ts";
import { MonitoredScheduler, type Scheduler } from "../../pipeline/index.ts";
import { OpenAiChatModel } from "../../agent/openai-model.ts";
import { agentRunStep } from "../../agent/run-agent.ts";
import { SimulatorProvider } from "../../fleet/simulator.ts";
import { VastProvider } from "../../fleet/vast.ts";

export interface HostParts {
  db: Db;
  clock: Clock;
  config: Config;
  scheduler: Scheduler;
  log: Logger;
  hostId?: string;
}

export function wireDeps(parts: HostParts): Deps {
  return {
    ...parts,
    scheduler: new MonitoredScheduler(parts.scheduler, parts),
    provider:
      parts.config.provider === "vast" && parts.config.vast.apiKey
        ? new VastProvider({ apiKey: parts.config.vast.apiKey, baseUrl: parts.config.vast.url })
        : new SimulatorProvider(parts.db, parts.clock),
    llm: parts.config.llm ? new OpenAiChatModel(parts.config.llm) : null,
    // With no LLM the agent step decides by the rules policy (decider "rules").
    runStep: agentRunStep,
  };
}
