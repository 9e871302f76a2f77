/** The agent's ports: the fleet's plus the LLM and, on the Node host, a token counter off the event loop. */
import type { FleetDeps } from "../fleet/deps.ts";
import type { ChatModel } from "./llm/chat-model.ts";
import type { Principal } from "../auth/roles.ts";

/** Tokenizes text off the event loop (the Node host's worker thread, functions/host/token-worker.ts). */
export interface TokenCounter {
  /** The cl100k_base tokens of each text, in order, exactly as agent/prompt/tokens.ts would count them. */
  tokenize(texts: readonly string[]): Promise<Uint32Array[]>;
}

export interface AgentDeps extends FleetDeps {
  llm: ChatModel | null;
  /**
   * Counts the tokens of large prompts off the event loop that serves ingest (the Node host);
   * without it they are counted in place (Workers, where an invocation has its own isolate).
   */
  tokenCounter?: TokenCounter;
  /**
   * Switches this agent between acting and shadow mode as `who` (jobs/agent-mode.ts: audited, a
   * resume hands over what happened while paused), for an operator's "pause"/"resume" in chat
   * (agent/rules/rules-chat.ts). Given by the agent's scope (jobs/with-agent.ts); absent, chat says
   * where the switch is instead.
   */
  switchMode?: (who: Principal, mode: "act" | "shadow") => Promise<{ previous: "act" | "shadow" }>;
}
