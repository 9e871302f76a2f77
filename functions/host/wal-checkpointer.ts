/**
 * The Node host's WAL checkpoints, moved off the event loop onto a worker thread
 * (wal-checkpoint-thread.mjs) with its own connection to the database file.
 *
 * In WAL mode a commit appends pages to the log, and a checkpoint copies them back into the file,
 * fsyncing the log before and the file after (under either `synchronous` setting, db/node-client.ts). SQLite runs it inside the
 * commit that takes the log past `wal_autocheckpoint` pages (1,000 by default), so under webhook
 * load every few hundred webhooks one commit held the event loop for those two fsyncs: about a
 * tenth of the time of an ingest (bench/RESULTS.md).
 *
 * The thread runs a PASSIVE checkpoint every INTERVAL_MS; it copies what is committed without
 * waiting for or blocking the host's writer. The host's own connection keeps SQLite's automatic
 * checkpoint, raised to BACKSTOP_PAGES, as the bound on the log: the log is rewound only after a
 * checkpoint that finished with no commit in between, which a passive one running beside steady
 * commits rarely does; the backstop's checkpoint then finds the pages already copied.
 * A thread that fails is logged once and never restarted; the connection goes back to SQLite's
 * default, checkpoints inside the commit, as without the thread.
 */
import type { FileIdentity } from "./database-checks.ts";
import { Worker } from "node:worker_threads";
import type { Client } from "@libsql/client";
import type { Logger } from "../../runtime/log.ts";
import { BUSY_TIMEOUT_MS } from "../../db/node-client.ts";

export const INTERVAL_MS = 250;
/** The log's bound in pages (about 40 MB at SQLite's 4 KiB pages). */
export const BACKSTOP_PAGES = 10_000;
/** SQLite's own `wal_autocheckpoint`, restored when the thread fails. */
export const SQLITE_DEFAULT_PAGES = 1000;

export interface CheckpointerOptions {
  intervalMs?: number;
  backstopPages?: number;
  /** The thread's script (tests substitute one that fails). */
  script?: URL;
  /** The file's identity as the host opened it: the thread opens nothing else (a deleted file is not re-created). */
  opened?: FileIdentity | null;
}

export class WalCheckpointer {
  /** Checkpoints of the thread that copied pages, for tests. */
  readonly stats = { checkpoints: 0 };
  /**
   * Settles once the thread's connection is open (or the thread ended first). Until then the thread
   * may be reading the file, which keeps a backstop checkpoint from rewinding the log; tests that
   * measure the log wait for it.
   */
  readonly ready: Promise<void>;
  private state: "running" | "stopping" | "stopped" = "running";
  private readonly closed: Promise<void>;

  private constructor(
    private readonly thread: Worker,
    private readonly client: Client,
    private readonly log: Logger,
  ) {
    // The HTTP server keeps the process alive; the thread alone never does.
    thread.unref();
    let closed: () => void;
    let ready: () => void;
    this.closed = new Promise((resolve) => (closed = resolve));
    this.ready = new Promise((resolve) => (ready = resolve));
    thread.on("message", (message: "ready" | "closed" | "checkpointed") => {
      if (message === "ready") ready();
      else if (message === "closed") closed();
      else this.stats.checkpoints++;
    });
    thread.on("error", (err) => {
      ready();
      this.fail(`crashed: ${err.message}`);
    });
    thread.on("exit", (code) => {
      ready();
      closed();
      this.fail(`exited with code ${code}`);
    });
  }

  /** Starts the thread on the file at `path` and raises `client`'s automatic checkpoint to the backstop. */
  static async start(path: string, client: Client, log: Logger, options: CheckpointerOptions = {}): Promise<WalCheckpointer> {
    await client.execute(`PRAGMA wal_autocheckpoint = ${options.backstopPages ?? BACKSTOP_PAGES}`);
    const thread = new Worker(options.script ?? new URL("./wal-checkpoint-thread.mjs", import.meta.url), {
      workerData: { path, opened: options.opened ?? null, intervalMs: options.intervalMs ?? INTERVAL_MS, busyTimeoutMs: BUSY_TIMEOUT_MS },
    });
    return new WalCheckpointer(thread, client, log);
  }

  /** True while the thread checkpoints (false after stop or a failure). */
  get alive(): boolean {
    return this.state === "running";
  }

  /** Stops the thread after its current checkpoint and closes its connection. */
  async stop(): Promise<void> {
    if (this.state !== "running") return;
    this.state = "stopping";
    this.thread.postMessage("stop");
    await this.closed;
    this.state = "stopped";
  }

  private fail(why: string): void {
    if (this.state !== "running") return;
    this.state = "stopped";
    this.log.error("the WAL checkpoint thread stopped; commits checkpoint on the event loop from now on", { why });
    this.client.execute(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`).catch(() => {});
  }
}
