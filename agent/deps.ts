/** The agent's ports: the fleet's plus the LLM and, on the Node host, a token counter off the event loop. */
import type { FleetDeps } from "../fleet/deps.ts";
import type { ChatModel } from "./llm/chat-model.ts";

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
}
