/** A run step that decides nothing: for tests of the pipeline itself, with no agent wired. */
import type { RunStep } from "../../pipeline/index.ts";

/** Records what the run consumed and nothing else: as a pipeline without an agent would. */
export const minimalRunStep: RunStep = async ({ events }) => ({
  decider: "none",
  mutated: false,
  reply: events.some((e) => e.source === "human") ? "Message received; no agent is configured to answer." : null,
  promptTokens: 0,
  completionTokens: 0,
  contextTokens: 0,
  compaction: null,
});
