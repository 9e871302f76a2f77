/**
 * Handlers of the fleet routes: the fleet as fleetwarden sees it (saying plainly whether it is
 * simulated, and what its provider can do), one instance's history, an operator's own action on it, and failure injection into
 * the simulated fleet.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listInstanceEvents, listInstances } from "../../fleet/instances/list-instances.ts";
import { withSpentToday } from "../../fleet/economics/spend.ts";
import { capabilityList } from "../../fleet/providers/capabilities.ts";
import { injectFailureOrRefuse } from "../../jobs/inject-failure.ts";
import type { FailureKind } from "../../fleet/providers/simulated-failures.ts";
import { RequestError } from "../../jobs/errors.ts";
import { operatorInstanceAction } from "../../jobs/operator-instance-action.ts";
import { idempotencyKeyHeader, type instanceActionBody } from "./fleet.schemas.ts";
import type { z } from "zod";

type InstanceActionBody = z.infer<typeof instanceActionBody>;

type Ctx = Context<AppEnv>;

export async function getInstances(c: Ctx, agentId: string) {
  const deps = c.get("deps");
  return c.json({
    simulated: deps.provider.kind === "simulator",
    provider: deps.provider.kind,
    capabilities: capabilityList(deps.provider),
    instances: await withSpentToday(deps, agentId, await listInstances(deps, agentId)),
  });
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

/** An operator's own action (jobs/operator-instance-action.ts, shared with the instance page's form). */
export async function postInstanceAction(c: Ctx, agentId: string, instanceId: string, body: InstanceActionBody) {
  const header = c.req.header("Idempotency-Key");
  const key = header === undefined ? crypto.randomUUID() : idempotencyKeyHeader.safeParse(header);
  if (typeof key !== "string" && !key.success)
    throw new RequestError(400, `invalid Idempotency-Key header: ${key.error.issues[0]?.message}`);
  const result = await operatorInstanceAction(c.get("deps"), c.get("operator"), {
    agentId,
    instanceId,
    kind: body.kind,
    ...(body.label ? { label: body.label } : {}),
    ...(body.note ? { note: body.note } : {}),
    idempotencyKey: `api:${typeof key === "string" ? key : key.data}`,
    via: "api",
  });
  return c.json({ action: result }, result.status === "awaiting_approval" ? 202 : 200);
}
