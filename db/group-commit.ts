/**
 * Group commit: batches submitted within a short window (or once `maxRequests` are waiting, or,
 * on Node, once a turn of the event loop adds nobody) are committed together as one database batch — one transaction, one fsync — and each submitter gets
 * its own statements' results only after that transaction committed. Statements run in submission
 * order inside the transaction, so each submission sees exactly what it would have seen run alone
 * after the ones before it: its dedup and debounce semantics are unchanged.
 *
 * If the shared batch fails, nothing of it was committed (the batch is one transaction); every
 * submission is then retried in a batch of its own, so one bad submission fails alone and no other
 * is lost. Submissions must therefore be idempotent (ingest's are: every write is keyed by a dedup
 * key), which also makes a retry after an ambiguous remote failure harmless.
 */
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Db } from "./client.ts";

export type Statements = readonly [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];

export interface GroupCommitOptions {
  /** How long the first submission of a group waits for others (ms). 0 = the next macrotask. */
  windowMs: number;
  /** A group is committed at once when this many submissions wait. */
  maxRequests: number;
  /**
   * Node only (setImmediate): also commit as soon as a turn of the event loop adds nobody to the
   * group. Under load the requests that arrived together join it and it does not sit out the
   * window while the process has nothing else to do.
   */
  untilQuiet?: boolean;
}

interface Waiting {
  statements: Statements;
  resolve(results: readonly unknown[]): void;
  reject(error: unknown): void;
}

export class GroupCommit {
  private waiting: Waiting[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Groups committed and submissions in them, for benchmarks and tests. */
  readonly stats = { groups: 0, submissions: 0, fallbacks: 0 };

  constructor(
    private readonly db: Db,
    private readonly options: GroupCommitOptions,
  ) {}

  submit<T extends Statements>(statements: T): Promise<BatchResponse<T>> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ statements, resolve: resolve as (results: readonly unknown[]) => void, reject });
      if (this.waiting.length >= this.options.maxRequests) return this.flush();
      this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
      if (this.options.untilQuiet && this.waiting.length === 1) this.flushWhenQuiet(this.waiting);
    });
  }

  /**
   * Checks after each turn of the event loop whether `group` grew; commits it after a turn that
   * added nobody. Bounded: it grows at most to maxRequests, and the window's timer commits it
   * regardless.
   */
  private flushWhenQuiet(group: Waiting[]): void {
    let seen = group.length;
    const check = () => {
      if (this.waiting !== group) return;
      if (group.length === seen) return this.flush();
      seen = group.length;
      setImmediate(check);
    };
    setImmediate(check);
  }

  /** Commits whatever is waiting now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const group = this.waiting;
    this.waiting = [];
    if (group.length) void this.commit(group);
  }

  private async commit(group: Waiting[]): Promise<void> {
    this.stats.groups++;
    this.stats.submissions += group.length;
    if (group.length === 1) return this.commitAlone(group[0]!);
    let results: readonly unknown[];
    try {
      results = await this.db.batch(group.flatMap((w) => w.statements) as unknown as Statements);
    } catch {
      // Nothing of the group was committed: give every submission its own transaction.
      this.stats.fallbacks++;
      await Promise.all(group.map((w) => this.commitAlone(w)));
      return;
    }
    let offset = 0;
    for (const w of group) {
      w.resolve(results.slice(offset, offset + w.statements.length));
      offset += w.statements.length;
    }
  }

  private async commitAlone(w: Waiting): Promise<void> {
    try {
      w.resolve(await this.db.batch(w.statements));
    } catch (err) {
      w.reject(err);
    }
  }
}
