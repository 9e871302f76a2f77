/**
 * Chooses the adapters named by the configuration (fleet provider, LLM, run step) and assembles
 * the dependencies. Shared by both hosts; each host brings what only it can make (the database
 * client, the scheduler, the clock). The scheduler is wrapped so that its refusals are recorded
 * (pipeline/scheduler-health.ts) on both hosts alike.
 */
import type { Deps } from "../../jobs/deps.ts";
import { MonitoredScheduler, type PipelineDeps } from "../../pipeline/index.ts";
import { OpenAiChatModel } from "../../agent/llm/openai-model.ts";
import { agentRunStep } from "../../agent/run-agent.ts";
import { defaultProvider } from "../../fleet/providers/providers.ts";
import { tracerFromSettings } from "../../runtime/otlp-tracer.ts";

/** What only a host can make: the pipeline's ports but group commit (the Node host adds it after). */
export type HostParts = Omit<PipelineDeps, "groupCommit">;

export function wireDeps(parts: HostParts): Deps {
  return {
    ...parts,
    scheduler: new MonitoredScheduler(parts.scheduler, parts),
    // PROVIDER (or whichever provider's key is set) with its key; the simulator without one.
    provider: defaultProvider(parts.config, parts.db, parts.clock),
    llm: parts.config.llm ? new OpenAiChatModel(parts.config.llm) : null,
    // With no LLM the agent step decides by the rules policy (decider "rules").
    runStep: agentRunStep,
    // Runs' traces go to OTEL_EXPORTER_OTLP_ENDPOINT when it is set; otherwise nothing is recorded.
    tracer: tracerFromSettings(parts.config.otel, parts.clock, parts.log),
  };
}
