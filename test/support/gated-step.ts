/**
 * A run step the test controls: each run waits at a gate until the test opens it (or never, to
 * play a run that died), and can be told to throw. Lets tests interleave events with a run.
 */
import type { RunOutcome } from "../../pipeline/index.ts";
import type { AgentRunContext, AgentRunStep } from "../../jobs/deps.ts";

export class GatedStep {
  readonly started: AgentRunContext[] = [];
  private gates: (() => void)[] = [];
  failNext: string | null = null;

  readonly step: AgentRunStep = async (context) => {
    this.started.push(context);
    await new Promise<void>((open) => this.gates.push(open));
    if (this.failNext) {
      const message = this.failNext;
      this.failNext = null;
      throw new Error(message);
    }
    return quietOutcome;
  };

  /** Lets the oldest waiting run finish. */
  open(): void {
    const gate = this.gates.shift();
    if (!gate) throw new Error("no run is waiting");
    gate();
  }

  get waiting(): number {
    return this.gates.length;
  }
}

const quietOutcome: RunOutcome = {
  decider: "none",
  mutated: false,
  reply: null,
  promptTokens: 0,
  completionTokens: 0,
  contextTokens: 0,
  compaction: null,
};
