/**
 * The Node host (`npm start`): configuration from the environment, the embedded libSQL file
 * (migrated on start; its WAL checkpoints on a worker thread), the local durable scheduler, the cron tick on an interval, and
 * @hono/node-server. Every start-up failure it can name (a bad or unwritable database, a port in
 * use, another live process on the same database) is a one-line ConfigError or HostLockError.
 * The open file is watched (database-file-watch.ts): deleted or replaced, /healthz answers 503
 * and writes are refused.
 * One writer per host identity (functions/host/host-lock.ts): on start, runs this identity left
 * `running` are recovered at once; leases other hosts hold (Turso, rolling restarts) expire as usual.
 */
import { serve } from "@hono/node-server";
import { dirname, resolve } from "node:path";
import { and, eq, isNotNull } from "drizzle-orm";
import type { Client } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { createNodeClient, embeddedPath } from "../../db/node-client.ts";
import { systemClock, type Clock } from "../../runtime/clock.ts";
import { ConfigError, parseConfig, type Config } from "../../runtime/config.ts";
import { writeHealthProbe } from "../../db/health-probe.ts";
import { consoleLogger, type Logger } from "../../runtime/log.ts";
import { agents } from "../../schema/index.ts";
import { DEFAULT_AGENT, ensureAgent, listAgentIds } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { recoverDeadLease } from "../../pipeline/index.ts";
import { LocalScheduler } from "../../pipeline/index.ts";
import { qstashSchedulerFromConfig } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { buildApp } from "../app.ts";
import { checkContextBudget } from "./context-budget.ts";
import { checkDatabaseFile, databaseFailure, databaseFileIdentity, databaseFilePath, probeDatabase } from "./database-checks.ts";
import { DatabaseFileWatch, refusingWritesWhenGone, watchedClient } from "./database-file-watch.ts";
import { nodeResolver } from "./node-resolver.ts";
import { acquireHostLock, acquireLockFile, nodeHostId, releaseHostLock, releaseLockFile, touchLockFile } from "./host-lock.ts";
import { loadOrCreateSecret, makeAdminToken, makeWebhookSecret } from "./node-secrets.ts";
import { TokenWorker } from "./token-worker.ts";
import { WalCheckpointer } from "./wal-checkpointer.ts";
import { wireDeps } from "./wire-deps.ts";

const CRON_INTERVAL_MS = 60_000;
/**
 * Group commit of ingests (webhooks, chat, triggers): those arriving together share one
 * transaction, committed after a turn of the event loop that adds nobody, after 2 ms, or at 64.
 * A lone request waits a turn; under load one commit serves many requests without the process
 * sitting idle through the window, which is what lets ingest keep up with a plain
 * one-INSERT-per-request server.
 */
const GROUP_COMMIT = { windowMs: 2, maxRequests: 64, untilQuiet: true };

export interface NodeHost {
  url: string;
  port: number;
  config: Config;
  stop(): Promise<void>;
}

function dataDir(databaseUrl: string): string {
  const path = embeddedPath(databaseUrl);
  return path === null ? resolve("data") : dirname(resolve(path));
}

/** Fills in the secrets Node may generate, printing each one the first time. */
function withLocalSecrets(config: Config, log: Logger): Config {
  const dir = dataDir(config.databaseUrl);
  try {
    return fillSecrets(config, log, dir);
  } catch (err) {
    const missing = config.adminToken ? "WEBHOOK_SECRET" : "ADMIN_TOKEN";
    throw new ConfigError(
      missing,
      `is not set and could not be generated in ${dir} (${(err as NodeJS.ErrnoException).code ?? String(err)}): set it`,
    );
  }
}

function fillSecrets(config: Config, log: Logger, dir: string): Config {
  const filled = { ...config };
  if (!filled.adminToken) {
    const token = loadOrCreateSecret(dir, "admin-token", makeAdminToken);
    filled.adminToken = token.value;
    if (token.generated) console.log(`\n  Admin token (shown once, stored in ${token.path}):\n    ${token.value}\n`);
  }
  if (!filled.webhookSecret) {
    const secret = loadOrCreateSecret(dir, "webhook-secret", makeWebhookSecret);
    filled.webhookSecret = secret.value;
    if (secret.generated) log.info("generated a webhook secret", { path: secret.path });
  }
  return filled;
}

export async function startNodeHost(
  env: Record<string, string | undefined>,
  options: {
    clock?: Clock;
    log?: Logger;
    cronIntervalMs?: number /** Wraps the database client (tests count its round trips). */;
    instrumentClient?: (client: Client) => Client;
  } = {},
): Promise<NodeHost> {
  const log = options.log ?? consoleLogger;
  const clock = options.clock ?? systemClock;
  const parsed = parseConfig(env, "node");
  checkContextBudget(parsed);
  checkDatabaseFile(parsed.databaseUrl);
  const config = withLocalSecrets(parsed, log);
  // One writer per file across machines: the OS-level lock beside it, before anything opens it.
  const lockedFile = databaseFilePath(config.databaseUrl);
  if (lockedFile) acquireLockFile(lockedFile, clock.now());
  const untouch = lockedFile ? touchLockFile(lockedFile) : () => {};
  const unlock = () => {
    untouch();
    if (lockedFile) releaseLockFile(lockedFile);
  };

  let client: Client;
  try {
    client = await createNodeClient(config.databaseUrl, config.databaseAuthToken, config.databaseSync);
  } catch (err) {
    unlock();
    throw databaseFailure("opening it", err);
  }
  try {
    await probeDatabase(client, config.databaseUrl);
  } catch (err) {
    client.close();
    unlock();
    throw err;
  }
  // The file's identity as opened: the host lock's name, and what /healthz compares the path with.
  const opened = databaseFileIdentity(config.databaseUrl);
  const fileWatch = opened ? new DatabaseFileWatch(config.databaseUrl, opened) : null;
  const hostId = nodeHostId(opened, dataDir(config.databaseUrl));
  const watched = fileWatch ? watchedClient(client, fileWatch) : client;
  const db = openDatabase(options.instrumentClient ? options.instrumentClient(watched) : watched);
  try {
    await applyMigrations(db).catch((err: unknown) => Promise.reject(databaseFailure("applying the migrations", err)));
    await writeHealthProbe(db, clock.now()).catch((err: unknown) => Promise.reject(databaseFailure("writing to it", err)));
    await acquireHostLock(db, hostId, clock.now());
  } catch (err) {
    client.close();
    unlock();
    throw err;
  }
  await ensureAgent(db, DEFAULT_AGENT, clock.now());
  const path = embeddedPath(config.databaseUrl);
  const checkpointer = path === null || process.env.NO_CP ? null : await WalCheckpointer.start(path, client, log, { opened });

  // With QStash, deliveries arrive at POST /internal/deliveries; no local timer runs.
  const scheduler =
    config.scheduler === "qstash"
      ? qstashSchedulerFromConfig(config)
      : new LocalScheduler({ db, clock, log, visibilityMs: config.runLeaseMs + 60_000 });
  const deps = {
    ...wireDeps({ db, clock, config, scheduler, log, hostId }),
    groupCommit: new GroupCommit(db, GROUP_COMMIT),
    tokenCounter: new TokenWorker(log),
    ...(fileWatch ? { databaseFile: fileWatch } : {}),
    resolveHost: nodeResolver,
  };
  if (deps.provider instanceof SimulatorProvider) await deps.provider.seed(config.simulator.instances);

  // Runs a previous process of this host identity left cannot still be running (the host lock says
  // that process is gone): recover them now. Other hosts' leases expire as usual.
  await db
    .update(agents)
    .set({ leaseExpiresAt: clock.now() })
    .where(and(isNotNull(agents.leaseToken), eq(agents.leaseHost, hostId)));
  for (const agentId of await listAgentIds(db)) await recoverDeadLease(deps, agentId);

  const app = buildApp(() => deps);
  const server = await listen(fileWatch ? refusingWritesWhenGone(app.fetch, fileWatch) : app.fetch, config.bindHost, config.port).catch(
    async (err: unknown) => {
      await deps.tokenCounter.close();
      await checkpointer?.stop();
      await releaseHostLock(db, hostId);
      client.close();
      unlock();
      throw err;
    },
  );
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;

  if (scheduler instanceof LocalScheduler) await scheduler.start((body) => handleDelivery(deps, body));
  const failed = (err: unknown) => log.error("cron tick failed", { error: String(err) });
  // One tick now, inline, so the fleet is reconciled (and visible) before the first interval
  // elapses; then every interval is a scheduled tick, as the Worker's cron trigger runs it.
  await runCronTick(deps).catch(failed);
  const cron = setInterval(() => runScheduledTick(deps).catch(failed), options.cronIntervalMs ?? CRON_INTERVAL_MS);

  log.info("fleetwarden is running", {
    url: httpUrl(config.bindHost, port),
    database: config.databaseUrl,
    scheduler: scheduler.kind,
    llm: deps.llm?.model ?? "none",
    provider: deps.provider.kind,
  });

  let stopped = false;
  return {
    url: httpUrl(WILDCARDS.has(config.bindHost) ? "127.0.0.1" : config.bindHost, port),
    port,
    config,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(cron);
      await new Promise<void>((done) => server.close(() => done()));
      if (scheduler instanceof LocalScheduler) await scheduler.stop();
      await deps.tokenCounter.close();
      await checkpointer?.stop();
      await releaseHostLock(db, hostId).catch(() => {});
      client.close();
      unlock();
    },
  };
}

/** Addresses that mean "every interface": the printed URL says so, the returned one is loopback. */
const WILDCARDS = new Set(["0.0.0.0", "::"]);

/** The URL of `host:port` as printed (an IPv6 address in brackets). */
const httpUrl = (host: string, port: number) => `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

/** Listens on `host:port` (HOST, PORT); a port in use (or not permitted) is a one-line ConfigError. */
function listen(fetch: Parameters<typeof serve>[0]["fetch"], hostname: string, port: number): Promise<ReturnType<typeof serve>> {
  return new Promise((ready, fail) => {
    const server = serve({ fetch, port, hostname }, () => ready(server));
    server.once("error", (err: NodeJS.ErrnoException) => {
      const why =
        err.code === "EADDRINUSE"
          ? "is already in use by another process"
          : err.code === "EACCES"
            ? "needs privileges this process does not have"
            : `cannot be listened on (${err.code ?? err.message})`;
      fail(new ConfigError("PORT", `${port} ${why}: choose another PORT`));
    });
  });
}
