/**
 * The Node host's TokenCounter: one worker thread (token-count-thread.mjs), started on first use,
 * tokenizes large prompts so the event loop that serves webhooks is not blocked by them during runs.
 *
 * Bounded: at most MAX_IN_FLIGHT requests wait on the thread; a request past that is tokenized in
 * place (as without the thread), so no queue grows. A thread that crashes or exits is logged as an
 * error once; what it still owed and everything after is tokenized in place: the counts are the
 * same, only the event loop pays for them again. It is never restarted (no restart loop).
 */
import { Worker } from "node:worker_threads";
import { tokenizeInProcess } from "../../agent/tokens.ts";
import type { TokenCounter } from "../../jobs/deps.ts";
import type { Logger } from "../../runtime/log.ts";

/** Requests waiting on the thread at most; more are tokenized in place. */
export const MAX_IN_FLIGHT = 32;

interface Waiting {
  texts: readonly string[];
  resolve(tokens: Uint32Array[]): void;
}

export class TokenWorker implements TokenCounter {
  private thread: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private stopped: "closed" | "failed" | null = null;

  constructor(
    private readonly log: Logger,
    private readonly script: URL = new URL("./token-count-thread.mjs", import.meta.url),
  ) {}

  /** Started on first use: a host whose agent never builds a prompt never pays for the thread (about 50 MB). */
  private started(): Worker {
    if (this.thread) return this.thread;
    const thread = new Worker(this.script);
    // The HTTP server keeps the process alive; the thread alone never does.
    thread.unref();
    thread.on("message", ({ id, tokens }: { id: number; tokens: Uint32Array[] }) => {
      const request = this.waiting.get(id);
      this.waiting.delete(id);
      request?.resolve(tokens);
    });
    thread.on("error", (err) => this.fail(`crashed: ${err.message}`));
    thread.on("exit", (code) => this.fail(`exited with code ${code}`));
    this.thread = thread;
    return thread;
  }

  /** True while the thread serves requests (false after close or a crash). */
  get alive(): boolean {
    return this.stopped === null;
  }

  tokenize(texts: readonly string[]): Promise<Uint32Array[]> {
    if (this.stopped !== null || this.waiting.size >= MAX_IN_FLIGHT) return Promise.resolve(tokenizeInProcess(texts));
    const id = this.nextId++;
    const thread = this.started();
    return new Promise((resolve) => {
      this.waiting.set(id, { texts, resolve });
      thread.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    if (this.stopped === null) this.stopped = "closed";
    await this.thread?.terminate();
    this.settleInProcess();
  }

  private fail(why: string): void {
    if (this.stopped !== null) return;
    this.stopped = "failed";
    this.log.error("the token-count worker thread stopped; tokens are counted on the event loop from now on", { why, waiting: this.waiting.size });
    this.settleInProcess();
  }

  private settleInProcess(): void {
    for (const request of this.waiting.values()) request.resolve(tokenizeInProcess(request.texts));
    this.waiting.clear();
  }
}
