/**
 * The composition type: every port the app uses, chosen once at start-up by the host
 * (functions/host/wire-deps.ts) and scoped per agent here in jobs/ (with-agent.ts). It never
 * travels below jobs/: each layer takes its own narrower set (pipeline/deps.ts, fleet/deps.ts,
 * agent/deps.ts), and the run step is handed to the pipeline as the one thing it calls back.
 */
import type { AgentDeps } from "../agent/deps.ts";
import type { RunContext, RunStep } from "../pipeline/index.ts";

export type { TokenCounter } from "../agent/deps.ts";

export interface Deps extends AgentDeps {
  /** What a claimed run does (the agent, which decides by rules without an LLM). */
  runStep: AgentRunStep;
  /** The Node host's check that its open database file is still the one DATABASE_URL names. */
  databaseFile?: { problem(): string | null };
}

/** A run step and its context as the agent sees them (the agent's ports on `deps`). */
export type AgentRunStep = RunStep<AgentDeps>;
export type AgentRunContext = RunContext<AgentDeps>;
