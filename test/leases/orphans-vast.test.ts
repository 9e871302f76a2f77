/**
 * The orphan sweep against the strict Vast.ai stand-in over loopback (test/fleet/vast-server.ts):
 * one Vast.ai account shared by two agents with label filters; an instance neither label claims is
 * told with its dph_total; an agent on another Vast.ai key (its own account) claims nothing of this
 * one even without a filter; with ORPHANS=stop, approving the request stops the instance through
 * the account (`PUT /api/v0/instances/{id}/` with `{"state": "stopped"}`), which the agent's own
 * filter would have refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { agents } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { ensureAgent, runTickCheck } from "../../pipeline/index.ts";
import { checkOrphans, type OrphanReport } from "../../fleet/leases/orphans.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { accountOf } from "../../fleet/leases/unclaimed.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { startVastServer, vastInstance, type VastServer } from "../fleet/vast-server.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";

let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function setup(orphans: "tell" | "stop") {
  server = await startVastServer({
    apiKey: "vast-key",
    instances: [
      vastInstance(1001, { label: "team-a-train" }),
      vastInstance(1002, { label: "team-b-eval" }),
      vastInstance(1003, { label: "stray" }),
    ],
  });
  const provider = new VastProvider({ apiKey: "vast-key", baseUrl: server.url, sleep: async () => {} });
  const deps = await createTestDeps({ provider, vars: { VAST_API_KEY: "vast-key", VAST_URL: server.url } });
  const now = deps.clock.now();
  await ensureAgent(deps.db, "team-b", now);
  // Its own Vast.ai key: another account, so its missing filter claims nothing of this one.
  await ensureAgent(deps.db, "elsewhere", now);
  await deps.db
    .update(agents)
    .set({ settings: { instanceFilter: { labelPrefix: "team-a-" }, orphans } })
    .where(eq(agents.id, "default"));
  await deps.db
    .update(agents)
    .set({ settings: { instanceFilter: { labelPrefix: "team-b-" } } })
    .where(eq(agents.id, "team-b"));
  await deps.db
    .update(agents)
    .set({ settings: { provider: { kind: "vast", apiKey: "another-vast-key" } } })
    .where(eq(agents.id, "elsewhere"));
  return deps;
}

async function tick(deps: TestDeps): Promise<OrphanReport> {
  const scope = await withAgent(deps, "default");
  return runTickCheck<OrphanReport, TestDeps>(scope!.deps as TestDeps, "default", checkOrphans);
}

describe("the orphan sweep on a Vast.ai account", () => {
  it("tells the instance no agent's label claims, with its $/h", async () => {
    const deps = await setup("tell");
    const report = await tick(deps);
    expect(report).toMatchObject({
      listed: "listed",
      told: [{ instanceId: "1003", why: "unclaimed", costPerHour: 0.734, label: "stray" }],
    });
  });

  it("ORPHANS=stop: approving the request stops it through the account", async () => {
    const deps = await setup("stop");
    const report = await tick(deps);
    expect(report.stops).toMatchObject([{ instanceId: "1003", status: "awaiting_approval" }]);
    expect(server!.requests.some((r) => r.method === "PUT")).toBe(false);
    const scope = await withAgent(deps, "default");
    const decided = await decideApproval(scope!.deps, "default", report.stops[0]!.approvalId!, "approve", undefined, "ana");
    expect(decided.action).toMatchObject({ status: "succeeded" });
    const put = server!.requests.filter((r) => r.method === "PUT");
    expect(put).toHaveLength(1);
    expect(put[0]).toMatchObject({ path: "/api/v0/instances/1003/", body: { state: "stopped" } });
  });

  it("tells accounts apart by kind, URL and key", () => {
    const config = { provider: "vast" as const, vast: { apiKey: "k1", url: "https://v" }, runpod: {}, lambda: {} } as never;
    expect(accountOf(undefined, config)).toBe(accountOf({ kind: "vast" }, config));
    expect(accountOf({ kind: "vast", apiKey: "k2" }, config)).not.toBe(accountOf(undefined, config));
    expect(accountOf({ kind: "vast", apiKey: "k1" }, config)).toBe(accountOf(undefined, config));
    expect(accountOf({ kind: "simulator" }, config)).toBe("simulator");
  });
});
