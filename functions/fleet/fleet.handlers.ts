/**
 * Handlers of the fleet routes: the fleet as fleetwarden sees it (saying plainly whether it is
 * simulated), one instance's history, and failure injection into the simulated fleet.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { RequestError } from "../errors.ts";
import { listInstanceEvents, listInstances } from "../../fleet/list-instances.ts";
import { injectSimulatorFailure, NotSimulatedError } from "../../fleet/simulator-reports.ts";
import type { FailureKind } from "../../fleet/simulator.ts";

type Ctx = Context<AppEnv>;

export async function getInstances(c: Ctx, agentId: string) {
  const deps = c.get("deps");
  return c.json({ simulated: deps.provider.kind === "simulator", provider: deps.provider.kind, instances: await listInstances(deps, agentId) });
}

export async function getInstanceEvents(c: Ctx, agentId: string, instanceId: string, limit: number) {
  return c.json({ events: await listInstanceEvents(c.get("deps"), agentId, instanceId, limit) });
}

export async function postFailure(c: Ctx, instanceId: string, kind: FailureKind) {
  let injected;
  try {
    injected = await injectSimulatorFailure(c.get("deps"), instanceId, kind);
  } catch (err) {
    if (err instanceof NotSimulatedError) throw new RequestError(409, err.message);
    throw err;
  }
  if (!injected) throw new RequestError(404, `unknown simulated instance: ${instanceId}`);
  return c.json({
    kind,
    instance: injected.instance,
    reports: injected.reports.map((r) => ({ agentId: r.agentId, eventId: r.eventId, outcome: r.outcome })),
  });
}
