/**
 * Child processes of the HTTP benchmark: the real Node host (`functions/node.ts`, as `npm start`
 * runs it, on a file database) and the bare baseline. Each gets a free loopback port and a fresh
 * temporary directory; `stop()` kills only the process it started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createClient } from "@libsql/client";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/support/child-process-waits.ts";

export const BENCH_ADMIN_TOKEN = "bench-admin-token-0123456789";
export const BENCH_WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

export interface Server {
  port: number;
  dbPath: string;
  pid: number;
  stop(): Promise<void>;
}

async function waitUntil(what: string, child: ChildProcess, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start within 60 s`);
}

function server(child: ChildProcess, port: number, dbPath: string): Server {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port,
    dbPath,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Every report stored, as the baseline stores every one: the benchmarks' fleets report far faster
 * than an instance does (200 instances at thousands of reports a second), which the flood bound
 * (REPORTS_STORED_PER_MINUTE, default 60 per instance) would cap to a row update; ingest is
 * measured doing the baseline's work, and the capped path in a row of its own.
 */
export const STORE_EVERY_REPORT: Record<string, string> = { REPORTS_STORED_PER_MINUTE: "100000" };

/**
 * A host whose whole fleet reports by webhook (no simulated provider instances), as the HTTP
 * benchmarks load it: their 200 instance ids are webhook-only, so the cap on those
 * (WEBHOOK_ONLY_INSTANCES_MAX, default 50, a 429 past it) is raised above the fleet; ingest is
 * the same either way.
 */
export const WEBHOOK_FLEET: Record<string, string> = {
  SIMULATOR_INSTANCES: "0",
  WEBHOOK_ONLY_INSTANCES_MAX: "1000",
  ...STORE_EVERY_REPORT,
};

/**
 * The real Node host with `env` on top of the bench's secrets, on a fresh file database or on
 * `dbPath` when the caller prepared one (agents and a fleet written before the host starts).
 */
export async function startFleetwarden(
  env: Record<string, string>,
  dbPath = join(mkdtempSync(join(tmpdir(), "fw-bench-")), "fleetwarden.db"),
): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "functions/node.ts"], {
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      PORT: String(port),
      DATABASE_URL: `file:${dbPath}`,
      ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
      ...env,
    },
    stdio: "ignore",
  });
  await waitUntil("the Node host", child, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
  return server(child, port, dbPath);
}

/** The bare baseline (bench/baseline-server.ts) on a fresh file database, at fleetwarden's durability setting. */
export async function startBaseline(sync: "full" | "normal" = "full"): Promise<Server> {
  const port = await freePort();
  const dbPath = join(mkdtempSync(join(tmpdir(), "fw-baseline-")), "baseline.db");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "bench/baseline-server.ts", dbPath, String(port), BENCH_WEBHOOK_SECRET, BENCH_ADMIN_TOKEN, sync],
    {
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let ready = false;
  child.stdout!.on("data", (chunk: Buffer) => (ready ||= chunk.toString().includes("ready")));
  await waitUntil("the baseline", child, async () => ready);
  return server(child, port, dbPath);
}

/** Resident set size of a process (Linux), in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/**
 * CPU seconds a process has used so far (Linux /proc, zeros elsewhere): its main thread (the
 * event loop: tid = pid) and all its other threads (GC helpers, worker threads, libuv's pool).
 */
export function threadCpuSeconds(pid: number): { main: number; others: number } {
  const used = { main: 0, others: 0 };
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks
      if (Number(tid) === pid) used.main += seconds;
      else used.others += seconds;
    }
  } catch {
    // not Linux, or the process is gone: nothing to add
  }
  return used;
}

/** Bytes per table and index (SQLite's dbstat), largest first, after a checkpoint. */
export async function dbBytesByObject(path: string): Promise<{ name: string; bytes: number }[]> {
  const client = createClient({ url: `file:${path}`, timeout: 5000 });
  try {
    await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const rs = await client.execute("select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc");
    return rs.rows.map((r) => ({ name: String(r.name), bytes: Number(r.bytes) }));
  } finally {
    client.close();
  }
}

/** The database file's size after a checkpoint folds its WAL in, in bytes. */
export async function dbBytes(path: string): Promise<number> {
  const client = createClient({ url: `file:${path}`, timeout: 5000 });
  await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  client.close();
  return statSync(path).size + (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);
}
