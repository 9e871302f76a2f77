/**
 * Which errors become which HTTP status, through the app. Only HTTPException and RequestError are
 * a client status; a provider's own status (a Vast.ai 404, an error merely carrying `status`) is
 * theirs, never ours, so a route it escapes from answers 500. Domain errors the caller can fix
 * (an operator name taken, an unknown operator) are turned into RequestErrors where caught.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ProviderError, type FleetInstance } from "../../fleet/providers/provider.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import type { FailureKind } from "../../fleet/providers/simulated-failures.ts";
import type { Logger } from "../../runtime/log.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";

/** A simulated fleet whose every call fails the way Vast.ai answers an unknown instance. */
class NotFoundUpstream extends SimulatorProvider {
  constructor(
    deps: TestDeps,
    private readonly error: () => Error,
  ) {
    super(deps.db, deps.clock);
  }
  override async get(_id: string): Promise<FleetInstance | null> {
    throw this.error();
  }
  override async injectFailure(_id: string, _kind: FailureKind): Promise<FleetInstance | null> {
    throw this.error();
  }
}

const vast404 = () => new ProviderError("Vast.ai has no such resource (404) on GET /instances/1/", 404);
const statused404 = () => Object.assign(new Error("upstream said 404"), { status: 404 });

function capturingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, error: (message) => void errors.push(message) };
}

async function upstreamFailing(error: () => Error) {
  const deps = await createTestDeps();
  const log = capturingLog();
  const failing = { ...deps, log, provider: new NotFoundUpstream(deps, error) };
  return { deps: failing, log, app: buildApp(() => failing) };
}

describe("a provider's status never becomes ours", () => {
  it.each([
    ["a ProviderError with status 404", vast404],
    ["any error carrying status 404", statused404],
  ])("%s thrown through an API route answers 500, logged, revealing nothing", async (_name, error) => {
    const { app, log } = await upstreamFailing(error);
    const res = await app.request("/api/simulator/instances/sim-1/fail", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ kind: "exit" }),
    });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body.error).toBe("internal error");
    expect(JSON.stringify(body)).not.toMatch(/404|Vast|upstream/);
    expect(log.errors).toEqual(["unhandled error"]);
  });

  it("a ProviderError with status 404 thrown through a dashboard post answers 500", async () => {
    const { deps } = await upstreamFailing(vast404);
    const client = await dashboardClient(deps);
    const res = await client.post("/fleet/sim-1/actions", { kind: "reboot", nonce: "nonce-upstream-404", confirm: "yes" });
    expect(res.status).toBe(500);
  });
});

describe("domain errors the caller can fix are answered with the status our route chose", () => {
  it("an operator name taken or reserved is a 409, an unknown operator a 404", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const create = (name: string) =>
      app.request("/api/operators", { method: "POST", headers: authHeaders(), body: JSON.stringify({ name, role: "viewer" }) });
    expect((await create("ada")).status).toBe(201);
    const taken = await create("ada");
    expect(taken.status).toBe(409);
    expect(await taken.json()).toEqual({ error: 'an operator named "ada" already exists' });
    expect((await create("admin")).status).toBe(409);
    const unknown = await app.request("/api/operators/999", { method: "DELETE", headers: authHeaders() });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "unknown operator: 999" });
  });
});
