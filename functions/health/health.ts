/**
 * GET /healthz, without auth. Assembled from parts, each adding its fields and saying whether the
 * service is healthy; adding a field is adding one part to PARTS. The database part makes a tiny
 * real write (one health_probe row), so a full disk or read-only file answers 503 instead of
 * `ok: true`, and so does a database file deleted or replaced under the Node host (`dbError`
 * says which, functions/host/database-file-watch.ts); a database refusing for its plan (Turso's
 * `BLOCKED` past the quota, `SQLITE_FULL` over its size) is `db: "blocked"` with the database's
 * words in `dbError`, and told once an hour straight to the channels (notify/database-refusal.ts); the scheduler part answers 503 while publishes are refused (the recorded
 * scheduler health: `{kind, ok: false, error, since}`) and reports the backlog of due deliveries.
 * `llm` names the deployment's model ("none" without one); each agent has its own LLM breaker, so
 * `llmTrouble` lists the agents whose model's breaker is open or misconfigured — one broken agent
 * is named there and does not make the deployment unhealthy (its own health route shows it too).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { pingDatabase } from "../../db/client.ts";
import { llmTrouble } from "../../jobs/llm-trouble.ts";
import { writeHealthProbe } from "../../db/health-probe.ts";
import type { Deps } from "../../jobs/deps.ts";
import { readSchedulerHealth, schedulerBacklog } from "../../pipeline/index.ts";
import { databaseWritable, noteDatabaseError } from "../../notify/database-refusal.ts";

/** What the parts read: the adapters in use and the database, never the run step. */
type HealthPart = (deps: Deps) => Promise<{ fields: Record<string, unknown>; healthy: boolean }>;

const databasePart: HealthPart = async (deps) => {
  // A deleted or replaced file still accepts writes (to an unlinked inode): that is not healthy.
  const gone = deps.databaseFile?.problem() ?? null;
  if (gone) return { fields: { db: "file gone", dbWritable: false, dbError: gone }, healthy: false };
  let refused: unknown = null;
  const writable = await writeHealthProbe(deps.db, deps.clock.now()).then(
    () => true,
    (err: unknown) => ((refused = err), false),
  );
  if (writable) databaseWritable(deps);
  // Turso past its plan's quota (BLOCKED) or over its size (SQLITE_FULL): named, and told directly.
  const blocked = writable ? null : await noteDatabaseError(deps, refused);
  if (blocked) return { fields: { db: "blocked", dbWritable: false, dbError: blocked }, healthy: false };
  const reachable = writable || (await pingDatabase(deps.db));
  return { fields: { db: writable ? "ok" : reachable ? "not writable" : "unreachable", dbWritable: writable }, healthy: writable };
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** `ok: null` when the record cannot be read (the database part then says why). */
const schedulerPart: HealthPart = async (deps) => {
  const health = await readSchedulerHealth(deps).catch(() => null);
  const scheduler = !health
    ? { kind: deps.scheduler.kind, ok: null }
    : health.ok
      ? { kind: health.kind, ok: true, since: iso(health.since) }
      : { kind: health.kind, ok: false, error: health.error, since: iso(health.since), lastSuccessAt: iso(health.lastSuccessAt) };
  return { fields: { scheduler, schedulerBacklog: await schedulerBacklog(deps).catch(() => null) }, healthy: health?.ok !== false };
};

const adaptersPart: HealthPart = async (deps) => ({
  fields: {
    llm: deps.llm?.model ?? "none",
    llmTrouble: await llmTrouble(deps).catch(() => null),
    provider: deps.provider.kind,
    simulated: deps.provider.kind === "simulator",
  },
  healthy: true,
});

const PARTS: HealthPart[] = [databasePart, schedulerPart, adaptersPart];

export const healthRoutes = new Hono<AppEnv>().get("/healthz", async (c) => {
  const deps = c.get("deps");
  const parts = await Promise.all(PARTS.map((part) => part(deps)));
  const ok = parts.every((p) => p.healthy);
  return c.json({ ok, ...Object.assign({}, ...parts.map((p) => p.fields)) }, ok ? 200 : 503);
});
