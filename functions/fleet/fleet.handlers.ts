/**
 * Handlers of the fleet routes: the fleet as fleetwarden sees it (saying plainly whether it is
 * simulated), one instance's history, and failure injection into the simulated fleet.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listInstanceEvents, listInstances } from "../../fleet/list-instances.ts";
import { withSpentToday } from "../../fleet/spend.ts";
import { injectFailureOrRefuse } from "../../jobs/inject-failure.ts";
import type { FailureKind } from "../../fleet/simulated-failures.ts";

type Ctx = Context<AppEnv>;

export async function getInstances(c: Ctx, agentId: string) {
  const deps = c.get("deps");
  return c.json({ simulated: deps.provider.kind === "simulator", provider: deps.provider.kind, instances: await withSpentToday(deps, agentId, await listInstances(deps, agentId)) });
}

export async function getInstanceEvents(c: Ctx, agentId: string, instanceId: string, limit: number) {
  return c.json({ events: await listInstanceEvents(c.get("deps"), agentId, instanceId, limit) });
}

export async function postFailure(c: Ctx, instanceId: string, kind: FailureKind) {
  const injected = await injectFailureOrRefuse(c.get("deps"), instanceId, kind);
  return c.json({
    kind,
    instance: injected.instance,
    reports: injected.reports.map((r) => ({ agentId: r.agentId, eventId: r.eventId, outcome: r.outcome })),
  });
}
