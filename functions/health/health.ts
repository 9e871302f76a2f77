/**
 * GET /healthz, without auth. Assembled from parts, each adding its fields and saying whether the
 * service is healthy; adding a field is adding one part to PARTS. The database part makes a tiny
 * real write (one health_probe row), so a full disk or read-only file answers 503 instead of
 * `ok: true`; the scheduler part reports the backlog of due deliveries.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { pingDatabase } from "../../db/client.ts";
import { describeLlm } from "../../agent/llm-health.ts";
import { writeHealthProbe } from "../../db/health-probe.ts";
import type { AgentDeps } from "../../agent/deps.ts";
import { schedulerBacklog } from "../../pipeline/index.ts";

/** What the parts read: the adapters in use and the database, never the run step. */
type HealthPart = (deps: Pick<AgentDeps, "db" | "clock" | "scheduler" | "llm" | "provider">) => Promise<{ fields: Record<string, unknown>; healthy: boolean }>;

const databasePart: HealthPart = async (deps) => {
  const writable = await writeHealthProbe(deps.db, deps.clock.now()).then(
    () => true,
    () => false,
  );
  const reachable = writable || (await pingDatabase(deps.db));
  return { fields: { db: writable ? "ok" : reachable ? "not writable" : "unreachable", dbWritable: writable }, healthy: writable };
};

const schedulerPart: HealthPart = async (deps) => ({
  fields: { scheduler: deps.scheduler.kind, schedulerBacklog: await schedulerBacklog(deps).catch(() => null) },
  healthy: true,
});

const adaptersPart: HealthPart = async (deps) => ({
  fields: { llm: await describeLlm(deps, true).catch(() => deps.llm?.model ?? "none"), provider: deps.provider.kind, simulated: deps.provider.kind === "simulator" },
  healthy: true,
});

const PARTS: HealthPart[] = [databasePart, schedulerPart, adaptersPart];

export const healthRoutes = new Hono<AppEnv>().get("/healthz", async (c) => {
  const deps = c.get("deps");
  const parts = await Promise.all(PARTS.map((part) => part(deps)));
  const ok = parts.every((p) => p.healthy);
  return c.json({ ok, ...Object.assign({}, ...parts.map((p) => p.fields)) }, ok ? 200 : 503);
});
