/**
 * A session of scripted incidents through the real pipeline, for the flat-tokens test and the
 * incidents benchmark (bench/incidents.bench.ts): one agent, a simulated fleet, and a scripted
 * OpenAI-compatible model over loopback. Each incident: an instance runs out of memory → the agent
 * reads its logs, starts it, schedules a re-check and answers; the re-check run confirms. An
 * incident's cost is the sum of the prompt tokens of every LLM call it made (the summariser's
 * included), counted as the budget counts them (agent/prompt/tokens.ts countPrompt).
 */
import { countPrompt } from "../../agent/prompt/tokens.ts";
import type { ChatMessage, ChatTool } from "../../agent/llm/chat-model.ts";
import { agentFixture, runPipeline } from "./agent-fixture.ts";
import { ScriptedLlm } from "./scripted-llm.ts";
import { deliverDue } from "./drive.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";

export const INCIDENTS = 40;

export interface IncidentSession {
  instances: number;
  /** Prompt tokens of each incident, in order. */
  perIncident: number[];
  /** Largest single request of the session. */
  maxCall: number;
  calls: number;
}

function requestTokens(body: ScriptedLlm["requests"][number]): number {
  return countPrompt(body.messages as unknown as ChatMessage[], (body.tools ?? []) as unknown as ChatTool[]);
}

/** One session of `incidents` scripted incidents on a fleet of `instances`. */
export async function incidentSession(instances: number, incidents = INCIDENTS): Promise<IncidentSession> {
  const llm = await new ScriptedLlm().start();
  // Summaries (requests without tools) are answered too, and counted with the incident.
  // A summary of a realistic length (about 120 tokens), not a one-liner.
  llm.onSummary = () => ({
    text:
      "Earlier in this session: several instances ran out of GPU memory (exit code 137 in the loader) and exited. " +
      "Each time I read the container log, restarted the instance once with start_instance, scheduled a re-check two minutes later " +
      "and confirmed it was running again. No human asked for anything; no instance failed twice in a row; no approvals are pending. " +
      "Open promises: none beyond the scheduled re-checks, which all ran.",
  });
  const { deps } = await agentFixture({ llm, instances, vars: { DEBOUNCE_STATE_MS: "1000", WAKE_MIN_DELAY_S: "60" } });
  // The fleet has been up a while: nothing changed in the last half hour.
  deps.clock.advance(31 * 60_000);
  const perIncident: number[] = [];
  let maxCall = 0;
  try {
    for (let k = 0; k < incidents; k++) {
      const id = `sim-${(k % instances) + 1}`;
      llm.push(
        { tools: [{ name: "get_instance_logs", arguments: { instance_id: id, tail_lines: 100 } }] },
        { tools: [{ name: "start_instance", arguments: { instance_id: id, reason: "exited with an out-of-memory error; one restart" } }] },
        {
          tools: [
            {
              name: "schedule_next_check",
              arguments: {
                in_seconds: 120,
                reason: `confirm ${id} is running after the restart`,
                instance_id: id,
                expect_state: "running",
              },
            },
          ],
        },
        { text: `${id} ran out of GPU memory and exited; I restarted it and will check again in 2 minutes.` },
        { text: `${id} is running again after the restart.` },
      );
      const before = llm.requests.length;
      await injectSimulatorFailure(deps, id, "oom");
      await runPipeline(deps);
      // The instance comes back, and the re-check runs when it is due.
      deps.clock.advance(121_000);
      await deliverDue(deps);
      await runPipeline(deps);
      const made = llm.requests.slice(before);
      if (made.filter((r) => r.tools).length !== 5)
        throw new Error(`incident ${k + 1} made ${made.length} LLM calls, not 5 (the script and the agent disagree)`);
      // The next incident comes 10 minutes later: well inside every hourly bound.
      deps.clock.advance(10 * 60_000);
      const tokens = made.map(requestTokens);
      maxCall = Math.max(maxCall, ...tokens);
      perIncident.push(tokens.reduce((a, b) => a + b, 0));
    }
    return { instances, perIncident, maxCall, calls: llm.requests.length };
  } finally {
    await llm.close();
  }
}
