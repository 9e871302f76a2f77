/**
 * The simulation's run step: records every run it is given (for the invariants), then waits at a
 * gate the driver opens later (so events, resets and cron ticks interleave with the run), or
 * never opens (the process died). It may schedule a wake, claim to have mutated, or throw.
 */
import type { RunOutcome } from "../../pipeline/index.ts";
import { createWake } from "../../pipeline/index.ts";
import type { Rng } from "./rng.ts";
import type { AgentRunContext, AgentRunStep } from "../../jobs/deps.ts";

/** The stored history an agent run starts from: how many turns, and whether a tool output in it is long. */
export interface StartingHistory {
  turns: number;
  stubbable: boolean;
}

export interface SimRun {
  runId: number;
  claimedAt: number;
  eventIds: number[];
  wakeIds: number[];
  /** Whether the step has returned or thrown (a dead run never does). */
  returned: boolean;
  open?: () => void;
  mutated: boolean;
  /** Agent runs: the stored history the agent started from. */
  history?: StartingHistory;
}

export class SimStep {
  readonly runs: SimRun[] = [];
  readonly violations: string[] = [];
  /** When calm, runs neither fail nor schedule wakes (the burst phase measures debounce alone). */
  calm = false;
  /** How often a run (not calm) throws once its gate opens. */
  failureRate = 0.1;
  /** Agent runs: reads the stored history the agent is about to start from. */
  readHistory: ((context: AgentRunContext) => Promise<StartingHistory>) | null = null;

  /**
   * `agent`: after its gate, the run is the real agent step (driven by the simulated LLM); the
   * simulation's own failures and wakes are then left to the agent and its tools.
   */
  constructor(
    private readonly rng: Rng,
    private readonly leaseMs: number,
    private readonly agent: AgentRunStep | null = null,
  ) {}

  /** Runs still waiting at their gate. */
  waiting(): SimRun[] {
    return this.runs.filter((r) => !r.returned && r.open);
  }

  readonly step: AgentRunStep = async (context: AgentRunContext): Promise<RunOutcome> => {
    const now = context.deps.clock.now();
    for (const other of this.runs) {
      if (!other.returned && other.claimedAt + this.leaseMs > now) {
        this.violations.push(
          `run ${context.runId} started at ${now} while run ${other.runId} (claimed ${other.claimedAt}) still held a live lease`,
        );
      }
    }
    const last = this.runs[this.runs.length - 1];
    if (last && last.runId >= context.runId) this.violations.push(`run id ${context.runId} did not increase after ${last.runId}`);
    const run: SimRun = {
      runId: context.runId,
      claimedAt: now,
      eventIds: context.events.map((e) => e.id),
      wakeIds: context.wakes.map((w) => w.id),
      returned: false,
      mutated: this.rng.chance(0.3),
    };
    this.runs.push(run);
    const fate = await new Promise<"finish" | "throw">((resolve) => {
      run.open = () => resolve(!this.calm && this.rng.chance(this.failureRate) ? "throw" : "finish");
    });
    run.returned = true;
    if (this.agent) {
      if (this.readHistory) run.history = await this.readHistory(context);
      const outcome = await this.agent(context);
      run.mutated = outcome.mutated;
      return outcome;
    }
    if (fate === "throw") throw new Error("simulated step failure");
    if (run.mutated && !this.calm && this.rng.chance(0.5)) {
      await createWake(context.deps, context.agentId, {
        dueAt: context.deps.clock.now() + this.rng.int(0, 30_000),
        reason: `check after run ${context.runId}`,
        createdByRun: context.runId,
      }).catch(() => undefined);
    }
    return { decider: "none", mutated: run.mutated, reply: null, promptTokens: 0, completionTokens: 0, contextTokens: 0, compaction: null };
  };
}
