/**
 * Everything the core needs from the outside, chosen once at start-up by the host and injected:
 * database, clock, scheduler, LLM, fleet provider, the run step, configuration and logging.
 * Tests and the simulation build the same object with fakes where the outside is not the point.
 */
import type { Db } from "../db/client.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./log.ts";
import type { Scheduler } from "../triggers/scheduler.ts";
import type { FleetProvider } from "../fleet/provider.ts";
import type { ChatModel } from "../agent/chat-model.ts";
import type { RunStep } from "../triggers/run-step.ts";

/** Tokenizes text off the event loop (the Node host's worker thread, functions/host/token-worker.ts). */
export interface TokenCounter {
  /** The cl100k_base tokens of each text, in order, exactly as agent/tokens.ts would count them. */
  tokenize(texts: readonly string[]): Promise<Uint32Array[]>;
}

export interface Deps {
  db: Db;
  clock: Clock;
  config: Config;
  scheduler: Scheduler;
  provider: FleetProvider;
  llm: ChatModel | null;
  /** What a claimed run does (the agent; a minimal step until it is configured). */
  runStep: RunStep;
  log: Logger;
  /** The host process's identity, written on the leases it takes (Node: machine + data dir). */
  hostId?: string;
  /**
   * Shares one database batch among ingests arriving together (the Node host); without it every
   * ingest commits its own batch (Workers, where a batch must belong to one request).
   */
  groupCommit?: GroupCommit;
  /**
   * Counts the tokens of large prompts off the event loop that serves ingest (the Node host);
   * without it they are counted in place (Workers, where an invocation has its own isolate).
   */
  tokenCounter?: TokenCounter;
}
