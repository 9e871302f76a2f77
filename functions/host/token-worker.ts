/**
 * The Node host's TokenCounter: one worker thread (token-count-thread.mjs), started on first use,
 * tokenizes large prompts so the event loop that serves webhooks is not blocked by them during runs.
 *
 * Bounded in queue, time and restarts:
 * - at most MAX_IN_FLIGHT requests wait on the thread; a request past that is tokenized in place
 *   when it is short (under IN_PLACE_MAX_CHARS in all), else refused (TokenizeUnavailable: the
 *   caller estimates, agent/prompt/tokens.ts), so no queue grows and no long text blocks the event loop;
 * - a request the thread has not answered within `deadlineMs` (gpt-tokenizer is quadratic on long
 *   runs of one character) is refused, the thread is terminated (with what it still owed, refused
 *   too) and a new one started on the next request: at most MAX_RESTARTS times;
 * - a thread that crashes or exits, or the restarts used up, is logged as an error once; from then
 *   on requests are answered in place when short and refused when long. Never a restart loop.
 */
import { Worker } from "node:worker_threads";
import { tokenizeInProcess } from "../../agent/prompt/tokens.ts";
import type { TokenCounter } from "../../jobs/deps.ts";
import type { Logger } from "../../runtime/log.ts";

/** Requests waiting on the thread at most; more are tokenized in place (or refused when long). */
export const MAX_IN_FLIGHT = 32;
/** How long a request may wait on the thread before it is refused and the thread replaced. */
export const TOKENIZE_DEADLINE_MS = 5000;
/** Threads replaced after a missed deadline, at most, over the host's life. */
export const MAX_RESTARTS = 3;
/** Text (characters in one request) short enough to tokenize on the event loop when the thread cannot. */
export const IN_PLACE_MAX_CHARS = 32_768;

/** The thread could not count these texts in time (or at all): the caller estimates instead. */
export class TokenizeUnavailable extends Error {
  constructor(why: string) {
    super(why);
    this.name = "TokenizeUnavailable";
  }
}

interface Waiting {
  texts: readonly string[];
  resolve(tokens: Uint32Array[]): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class TokenWorker implements TokenCounter {
  private thread: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private stopped: "closed" | "failed" | null = null;
  /** Threads terminated for a missed deadline so far. */
  restarts = 0;

  constructor(
    private readonly log: Logger,
    private readonly script: URL = new URL("./token-count-thread.mjs", import.meta.url),
    private readonly deadlineMs = TOKENIZE_DEADLINE_MS,
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
      if (request) clearTimeout(request.timer);
      request?.resolve(tokens);
    });
    thread.on("error", (err) => thread === this.thread && this.fail(`crashed: ${err.message}`));
    thread.on("exit", (code) => thread === this.thread && this.fail(`exited with code ${code}`));
    this.thread = thread;
    return thread;
  }

  /** True while the thread serves requests (false after close, a crash or the restarts used up). */
  get alive(): boolean {
    return this.stopped === null;
  }

  tokenize(texts: readonly string[]): Promise<Uint32Array[]> {
    if (this.stopped !== null || this.waiting.size >= MAX_IN_FLIGHT)
      return inPlaceIfShort(texts, this.stopped ? "the token-count thread is stopped" : "the token-count thread is busy");
    const id = this.nextId++;
    const thread = this.started();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.missedDeadline(), this.deadlineMs);
      timer.unref?.();
      this.waiting.set(id, { texts, resolve, reject, timer });
      thread.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    if (this.stopped === null) this.stopped = "closed";
    const thread = this.thread;
    this.thread = null;
    await thread?.terminate();
    this.settle("the token-count thread was closed");
  }

  /** The thread is stuck on something slow: refuse what it owes, replace it (bounded). */
  private missedDeadline(): void {
    const thread = this.thread;
    this.thread = null;
    void thread?.terminate();
    this.restarts++;
    const why = `no answer within ${this.deadlineMs} ms`;
    if (this.restarts >= MAX_RESTARTS) return this.fail(`${why}, ${this.restarts} times`);
    this.log.error("the token-count worker thread missed its deadline; it is replaced and what it owed is estimated", {
      restarts: this.restarts,
      waiting: this.waiting.size,
    });
    this.refuseAll(why);
  }

  private fail(why: string): void {
    if (this.stopped !== null) return;
    this.stopped = "failed";
    this.log.error("the token-count worker thread stopped; short texts are counted on the event loop and long ones estimated from now on", {
      why,
      waiting: this.waiting.size,
    });
    this.settle(why);
  }

  private refuseAll(why: string): void {
    for (const request of this.waiting.values()) {
      clearTimeout(request.timer);
      request.reject(new TokenizeUnavailable(why));
    }
    this.waiting.clear();
  }

  /** What the thread still owed: short requests counted in place, long ones refused. */
  private settle(why: string): void {
    for (const request of this.waiting.values()) {
      clearTimeout(request.timer);
      inPlaceIfShort(request.texts, why).then(request.resolve, request.reject);
    }
    this.waiting.clear();
  }
}

function inPlaceIfShort(texts: readonly string[], why: string): Promise<Uint32Array[]> {
  const chars = texts.reduce((sum, t) => sum + t.length, 0);
  if (chars > IN_PLACE_MAX_CHARS)
    return Promise.reject(new TokenizeUnavailable(`${why}; ${chars} characters are too many to count on the event loop`));
  return Promise.resolve(tokenizeInProcess(texts));
}
