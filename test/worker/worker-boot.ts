/**
 * Worker test support: builds the deploy bundle with wrangler (dry run), boots the Worker in
 * workerd offline with `unstable_startWorker`, and runs a loopback "database" that records what
 * the Worker sends it and answers every request 503, so the database is unreachable but the
 * Worker's attempts to use it are observable. A booted Worker sees only the bindings a test gives
 * it: a `.dev.vars` or `.env` in the repository root (docs/operations.md's "try the Worker locally")
 * is not read (`envFiles` names a file that does not exist, and wrangler then reads neither).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { unstable_startWorker } from "wrangler";

export const ROOT = resolve(import.meta.dirname, "../..");

// Offline: no Request.cf download, no banner/update check, no telemetry.
const OFFLINE_ENV = { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true", WRANGLER_SEND_METRICS: "false" };
Object.assign(process.env, OFFLINE_ENV);

/**
 * `wrangler deploy --dry-run`: the bundle's path, gzipped size in bytes, and the packages that
 * contribute most to it (so a size failure says what to fix).
 */
export async function buildBundle(): Promise<{ path: string; gzipBytes: number; largest: string[] }> {
  const outdir = mkdtempSync(join(tmpdir(), "fleetwarden-worker-"));
  const metafile = join(outdir, "meta.json");
  await promisify(execFile)("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir, "--metafile", metafile], {
    cwd: ROOT,
    env: { ...process.env, ...OFFLINE_ENV },
  });
  const path = join(outdir, "worker.js");
  const meta = JSON.parse(readFileSync(metafile, "utf8")) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
  const inputs = Object.entries(meta.outputs).find(([name]) => name.endsWith("worker.js"))?.[1].inputs ?? {};
  const bySource = new Map<string, number>();
  for (const [file, { bytesInOutput }] of Object.entries(inputs)) {
    const source = file.includes("node_modules/") ? file.slice(file.lastIndexOf("node_modules/") + 13) : file;
    bySource.set(source, (bySource.get(source) ?? 0) + bytesInOutput);
  }
  const largest = [...bySource]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([file, bytes]) => `${file} ${Math.round(bytes / 1024)} KiB`);
  return { path, gzipBytes: gzipSync(readFileSync(path)).length, largest };
}

export interface RecordingDatabase {
  url: string;
  /** Bodies of every request the Worker sent (Hrana pipelines carry the SQL text). */
  bodies: string[];
  close(): Promise<void>;
}

export async function startUnreachableDatabase(): Promise<RecordingDatabase> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString("utf8")}`);
      res.writeHead(503, { "Content-Type": "text/plain" });
      res.end("database unavailable");
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", () => ready()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((done) => server.close(() => done())) };
}

/**
 * An env file that never exists: given as `envFiles`, wrangler reads it instead of `.dev.vars` and
 * the default `.env` files next to wrangler.toml (wrangler's getVarsForDev: `.dev.vars` only when
 * `envFiles` is empty).
 */
export const NO_ENV_FILE = join(mkdtempSync(join(tmpdir(), "fleetwarden-no-env-")), "none.env");

export async function bootWorker(vars: Record<string, string>) {
  const worker = await unstable_startWorker({
    config: join(ROOT, "wrangler.toml"),
    envFiles: [NO_ENV_FILE],
    bindings: Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: "plain_text" as const, value }])),
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: false,
      watch: false,
      remote: false,
      logLevel: "none",
      testScheduled: true,
    },
    sendMetrics: false,
  });
  await worker.ready;
  const base = await worker.url;
  return {
    /** The Worker's origin on loopback, without a trailing slash. */
    url: base.origin,
    fetch: (path: string, init?: RequestInit) => fetch(new URL(path, base), init),
    dispose: () => worker.dispose(),
  };
}
