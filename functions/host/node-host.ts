/**
 * The Node host (`npm start`): configuration from the environment, the embedded libSQL file
 * (migrated on start), the local durable scheduler, the cron tick on an interval, and
 * @hono/node-server. It assumes it is the only process using its database: on start, runs left
 * `running` by a previous process are recovered at once instead of waiting for their lease.
 */
import { serve } from "@hono/node-server";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isNotNull } from "drizzle-orm";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { createNodeClient } from "../../db/node-client.ts";
import { systemClock, type Clock } from "../../runtime/clock.ts";
import { parseConfig, type Config } from "../../runtime/config.ts";
import { consoleLogger, type Logger } from "../../runtime/log.ts";
import { agents } from "../../schema/index.ts";
import { DEFAULT_AGENT, ensureAgent, listAgentIds } from "../../triggers/agents.ts";
import { handleDelivery } from "../../triggers/deliver.ts";
import { recoverDeadLease } from "../../triggers/lease.ts";
import { LocalScheduler } from "../../triggers/local-scheduler.ts";
import { qstashSchedulerFromConfig } from "../../triggers/qstash-scheduler.ts";
import { runCronTick } from "../../triggers/tick.ts";
import { SimulatorProvider } from "../../fleet/simulator.ts";
import { buildApp } from "../app.ts";
import { loadOrCreateSecret, makeAdminToken, makeWebhookSecret } from "./node-secrets.ts";
import { wireDeps } from "./wire-deps.ts";

const CRON_INTERVAL_MS = 60_000;
/**
 * Group commit of ingests (webhooks, chat, triggers): those arriving within 2 ms, or 64 at once,
 * share one transaction. A lone request waits at most the window; under load one commit serves
 * many requests, which is what lets ingest keep up with a plain one-INSERT-per-request server.
 */
const GROUP_COMMIT = { windowMs: 2, maxRequests: 64 };

export interface NodeHost {
  url: string;
  port: number;
  config: Config;
  stop(): Promise<void>;
}

function dataDir(databaseUrl: string): string {
  if (!databaseUrl.startsWith("file:")) return resolve("data");
  const path = databaseUrl.startsWith("file://") ? fileURLToPath(databaseUrl) : databaseUrl.slice("file:".length);
  return dirname(resolve(path));
}

/** Fills in the secrets Node may generate, printing each one the first time. */
function withLocalSecrets(config: Config, log: Logger): Config {
  const dir = dataDir(config.databaseUrl);
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
  options: { clock?: Clock; log?: Logger; cronIntervalMs?: number } = {},
): Promise<NodeHost> {
  const log = options.log ?? consoleLogger;
  const clock = options.clock ?? systemClock;
  const config = withLocalSecrets(parseConfig(env, "node"), log);

  const client = await createNodeClient(config.databaseUrl, config.databaseAuthToken);
  const db = openDatabase(client);
  await applyMigrations(db);
  await ensureAgent(db, DEFAULT_AGENT, clock.now());

  // With QStash, deliveries arrive at POST /internal/deliveries; no local timer runs.
  const scheduler =
    config.scheduler === "qstash"
      ? qstashSchedulerFromConfig(config)
      : new LocalScheduler({ db, clock, log, visibilityMs: config.runLeaseMs + 60_000 });
  const deps = { ...wireDeps({ db, clock, config, scheduler, log }), groupCommit: new GroupCommit(db, GROUP_COMMIT) };
  if (deps.provider instanceof SimulatorProvider) await deps.provider.seed(config.simulator.instances);

  // A previous process's runs cannot still be running: recover them now, not after the lease.
  await db.update(agents).set({ leaseExpiresAt: clock.now() }).where(isNotNull(agents.leaseToken));
  for (const agentId of await listAgentIds(db)) await recoverDeadLease(deps, agentId);

  const app = buildApp(() => deps);
  const server = await new Promise<ReturnType<typeof serve>>((ready) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: "0.0.0.0" }, () => ready(s));
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;

  if (scheduler instanceof LocalScheduler) await scheduler.start((body) => handleDelivery(deps, body));
  const tick = () => runCronTick(deps).catch((err: unknown) => log.error("cron tick failed", { error: String(err) }));
  // One tick now, so the fleet is reconciled (and visible) before the first interval elapses.
  await tick();
  const cron = setInterval(tick, options.cronIntervalMs ?? CRON_INTERVAL_MS);

  log.info("fleetwarden is running", {
    url: `http://localhost:${port}`,
    database: config.databaseUrl,
    scheduler: scheduler.kind,
    llm: deps.llm?.model ?? "none",
    provider: deps.provider.kind,
  });

  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    config,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(cron);
      await new Promise<void>((done) => server.close(() => done()));
      if (scheduler instanceof LocalScheduler) await scheduler.stop();
      client.close();
    },
  };
}
