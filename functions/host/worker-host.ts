/**
 * The Cloudflare Workers host: `fetch` serves the app, `scheduled` runs the cron tick. Dependencies
 * are built once per isolate from the Worker's vars and secrets (Turso over HTTP, QStash), never
 * per request. The `default` agent is ensured lazily and an unreachable database is tolerated, so
 * health, routing and auth still answer; a configuration error answers a 500 naming the variable.
 * A database behind the bundled migrations answers 503 naming `npm run db:migrate` (checked once
 * per isolate; re-checked while behind).
 */
import { createClient } from "@libsql/client/web";
import type { ExecutionContext } from "hono";
import { openDatabase } from "../../db/client.ts";
import { schemaBehindMessage, schemaStatus } from "../../db/schema-version.ts";
import { systemClock } from "../../runtime/clock.ts";
import { ConfigError, parseConfig } from "../../runtime/config.ts";
import type { Deps } from "../../jobs/deps.ts";
import { consoleLogger } from "../../runtime/log.ts";
import { DEFAULT_AGENT, ensureAgent } from "../../pipeline/index.ts";
import { qstashSchedulerFromConfig } from "../../pipeline/index.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { buildApp } from "../app.ts";
import { checkContextBudget } from "./context-budget.ts";
import { wireDeps } from "./wire-deps.ts";

/** The Worker's vars and secrets (the generated `Env`, or any record of strings). */
type WorkerEnv = object;

/** The database is behind this build's migrations: every request answers 503 until it is migrated. */
class SchemaBehindError extends Error {
  override name = "SchemaBehindError";
}

interface Isolate {
  deps: Deps;
  /** Settles once the default agent (and simulator fleet) exist; reset on failure to retry. */
  ready: Promise<void> | null;
}

let isolate: Isolate | null = null;
let reportedConfigError = false;

/** Turso over HTTP; a URL the client cannot use is a configuration error, not a crash. */
function remoteClient(url: string, authToken: string | undefined) {
  try {
    return createClient({ url, authToken });
  } catch (err) {
    throw new ConfigError("DATABASE_URL", `is not a usable libSQL URL (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Builds the isolate's dependencies on first use; throws ConfigError for bad variables. */
function isolateFor(env: WorkerEnv): Isolate {
  if (isolate) return isolate;
  const config = parseConfig({ ...env }, "worker");
  checkContextBudget(config);
  if (config.scheduler !== "qstash")
    throw new ConfigError("SCHEDULER", "must be qstash on Workers: no long-lived process runs the local timer");
  const db = openDatabase(remoteClient(config.databaseUrl, config.databaseAuthToken));
  const scheduler = qstashSchedulerFromConfig(config);
  isolate = { deps: wireDeps({ db, clock: systemClock, config, scheduler, log: consoleLogger }), ready: null };
  return isolate;
}

/** Creates what must exist before the app is useful; a failure is logged and retried next time. */
function ensureReady(state: Isolate): Promise<void> {
  if (state.ready) return state.ready;
  const { deps } = state;
  state.ready = (async () => {
    // Checked once per isolate (a behind database is re-checked on the next request, so a
    // migration is picked up without a redeploy); an unreachable database is not "behind".
    const schema = await schemaStatus(deps.db);
    if (schema.state === "behind") throw new SchemaBehindError(schemaBehindMessage(schema));
    await ensureAgent(deps.db, DEFAULT_AGENT, deps.clock.now());
    if (deps.provider instanceof SimulatorProvider) await deps.provider.seed(deps.config.simulator.instances);
  })().catch((err: unknown) => {
    state.ready = null;
    if (err instanceof SchemaBehindError) {
      deps.log.error("database schema is behind", { error: err.message });
      throw err;
    }
    deps.log.error("could not prepare the database (will retry)", { error: String(err) });
  });
  return state.ready;
}

/** The isolate, ready as far as the database allows; throws ConfigError for bad variables. */
async function readyIsolate(env: WorkerEnv): Promise<Isolate> {
  const state = isolateFor(env);
  await ensureReady(state);
  return state;
}

const app = buildApp((env) => isolateFor(env).deps);

export async function handleFetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
  try {
    await readyIsolate(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      if (!reportedConfigError) {
        reportedConfigError = true;
        consoleLogger.error("invalid Worker configuration", { variable: err.variable, error: err.message });
      }
      return Response.json({ error: err.message, variable: err.variable }, { status: 500 });
    }
    if (err instanceof SchemaBehindError) return Response.json({ error: err.message }, { status: 503 });
    throw err;
  }
  return app.fetch(request, env, ctx);
}

/**
 * The cron trigger: one scheduled tick (jobs/scheduled-tick.ts, the same as the Node interval's).
 * Never rejects: a configuration error is one log line per tick (the tick cannot run), any other
 * failure (an unreachable database) one error line; neither is an uncaught error with a stack.
 * The promise is also handed to `waitUntil`, so the work outlives the handler either way.
 */
export function handleScheduled(env: WorkerEnv, ctx: ExecutionContext): Promise<void> {
  const tick = readyIsolate(env)
    .then(async ({ deps }) => {
      // What a run sends after it finishes (its trace) is kept alive past the handler.
      const report = await runScheduledTick({ ...deps, background: (work) => ctx.waitUntil(work) });
      deps.log.info("cron tick", { ...report });
    })
    .catch((err: unknown) => {
      if (err instanceof ConfigError)
        consoleLogger.error("cron tick skipped: invalid Worker configuration", { variable: err.variable, error: err.message });
      else consoleLogger.error("cron tick failed", { error: String(err) });
    });
  ctx.waitUntil(tick);
  return tick;
}
