/**
 * The MCP server (issue #35, items 1 and 2), driven by the official SDK's Client and its
 * StreamableHTTPClientTransport (modelcontextprotocol/typescript-sdk 1.32.2):
 * - against a running Node host over loopback (embedded libSQL file, simulator fleet): initialize,
 *   list tools, list_instances, rent_instance on the simulator with a lease (the action recorded
 *   as the MCP client's for its operator, the lease and the provider label written), extend_lease,
 *   release_instance; a viewer's token is offered no write tool and cannot rent; no token is 401;
 * - against the app's fetch handler as the Worker host calls it (in-memory libSQL, fake clock):
 *   the owner budget refuses a rental past OWNER_SPEND_LIMIT_PER_DAY_USD with the figures, and an
 *   owner's 6th rental within an hour is refused (the 1st hour's bound lifts an hour later).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeHost } from "../../functions/host/node-host.ts";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { leases, notifications, operatorActivity, simulatorInstances } from "../../schema/index.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { createTestDeps, TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";

type Json = Record<string, any>;

const RENT = {
  gpu_name: "RTX 4090",
  gpu_count: 1,
  max_price_per_hour: 0.5,
  image: "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
  lease_seconds: 3600,
  purpose: "fine-tune the classifier",
};

async function connect(url: string, token: string, name = "claude-code", fetchFn?: typeof fetch) {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(fetchFn ? { fetch: fetchFn } : {}),
  });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; json: Json }> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  const text = result.content[0]?.text ?? "";
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = { text };
  }
  return { isError: result.isError === true, json };
}

describe("the MCP server on a running Node host", () => {
  let host: Awaited<ReturnType<typeof startNodeHost>>;
  let url: string;
  let file: ReturnType<typeof createClient>;
  const tokens: Record<string, string> = {};
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${host.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Json;
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "fw-mcp-"));
    host = await startNodeHost(
      {
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
        PORT: "0",
        DATABASE_URL: `file:${join(dir, "fw.db")}`,
        SIMULATOR_INSTANCES: "2",
        SIMULATOR_FAILURE_RATE: "0",
      },
      { log: silentLogger, cronIntervalMs: 3_600_000 },
    );
    file = createClient({ url: `file:${join(dir, "fw.db")}` });
    await api("POST", "/api/cron");
    for (const [name, role] of [
      ["ada", "operator"],
      ["vic", "viewer"],
    ] as const)
      tokens[name] = (await api("POST", "/api/operators", { name, role })).token as string;
    url = `${host.url}/api/agents/default/mcp`;
  });

  afterAll(async () => {
    file?.close();
    await host?.stop();
  });

  it("initializes, lists tools, lists instances, rents on a lease, extends and releases it", async () => {
    const client = await connect(url, tokens.ada!);
    expect(client.getServerVersion()?.name).toBe("fleetwarden");
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(
      [
        "extend_lease",
        "get_instance",
        "get_spend",
        "list_approvals",
        "list_instances",
        "release_instance",
        "rent_instance",
        "request_action",
      ].sort(),
    );

    const listed = await call(client, "list_instances");
    expect(listed.isError).toBe(false);
    expect((listed.json.instances as Json[]).length).toBe(2);

    const before = Date.now();
    const rented = await call(client, "rent_instance", RENT);
    expect(rented.isError).toBe(false);
    expect(rented.json).toMatchObject({ status: "succeeded", lease: { owner: "ada", client: "claude-code", purpose: RENT.purpose } });
    const id = rented.json.instanceId as string;
    expect(rented.json.pricePerHour).toBeLessThanOrEqual(0.5);
    const endsAt = Date.parse(rented.json.leaseEndsAt as string);
    expect(endsAt).toBeGreaterThanOrEqual(before + 3600_000);

    // Attributed to the operator and the MCP client; the owner and lease end are on the provider's label.
    const recorded = (await api("GET", "/api/agents/default/actions")).actions as Json[];
    expect(recorded.find((a) => a.id === rented.json.actionId)).toMatchObject({
      kind: "rent",
      decidedBy: "llm",
      model: "mcp:claude-code",
      operator: "ada",
      status: "succeeded",
    });
    // The simulator's account, read from the host's database file (what the provider holds, not fleetwarden's view).
    const simulated = async (instanceId: string) =>
      (await file.execute({ sql: "select label, state from simulator_instances where id = ?", args: [instanceId] })).rows[0];
    const labelOf = async (instanceId: string) => (await simulated(instanceId))?.label;
    expect(await labelOf(id)).toBe(`fw-lease owner=ada until=${new Date(endsAt).toISOString()}`);

    const got = await call(client, "get_instance", { instance_id: id });
    expect(got.json.lease).toMatchObject({ owner: "ada", endedAt: null });

    const extended = await call(client, "extend_lease", { instance_id: id, lease_seconds: 7200 });
    expect(extended.isError).toBe(false);
    const newEnd = Date.parse(extended.json.lease.endsAt as string);
    expect(newEnd).toBeGreaterThan(endsAt);
    expect(extended.json.label).toMatchObject({ status: "succeeded" });
    expect(await labelOf(id)).toBe(`fw-lease owner=ada until=${new Date(newEnd).toISOString()}`);

    const released = await call(client, "release_instance", { instance_id: id });
    expect(released.json).toMatchObject({ status: "succeeded", lease: { endReason: "released" } });
    expect((await call(client, "get_instance", { instance_id: id })).json.lease.endedAt).not.toBeNull();
    expect((await simulated(id))?.state).toBe("stopped");

    // Released: acting on it again is refused before the action table is asked.
    const again = await call(client, "request_action", { instance_id: id, kind: "start", reason: "more" });
    expect(again.isError).toBe(true);
    expect(again.json.error).toMatch(/lease .* ended/);
    await client.close();
  });

  it("offers a viewer the read tools only: it cannot rent", async () => {
    const client = await connect(url, tokens.vic!, "cursor");
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("list_instances");
    expect(tools).not.toContain("rent_instance");
    const rents = async () => ((await api("GET", "/api/agents/default/actions")).actions as Json[]).filter((a) => a.kind === "rent").length;
    const before = await rents();
    const refused = (await client.callTool({ name: "rent_instance", arguments: RENT })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/rent_instance not found/);
    expect(await rents()).toBe(before);
    await client.close();
  });

  it("answers no token with a 401 JSON error, and GET with 405", async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error).toMatch(/Authorization/);
    const get = await fetch(url, { headers: { authorization: `Bearer ${tokens.ada}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
  });
});

describe("rental gates, through the app's fetch handler (as the Worker host calls it)", () => {
  async function setup(vars: Record<string, string> = {}) {
    const deps = await createTestDeps({ vars });
    const app = buildApp(() => deps);
    const { token } = await createOperator(deps.db, { name: "ada", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const fetchFn = ((input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init))) as typeof fetch;
    const client = await connect("http://fleetwarden.test/api/agents/default/mcp", token, "codex", fetchFn);
    return { deps, client, app };
  }

  it("refuses a rental past the owner's daily budget, with the figures, and rents within it", async () => {
    const { deps, client } = await setup({ OWNER_SPEND_LIMIT_PER_DAY_USD: "1" });
    deps.clock.set(Date.parse("2026-12-06T08:00:00Z"));
    // $0.50/h for 3 h is $1.50 today: past the $1.00 budget.
    const refused = await call(client, "rent_instance", { ...RENT, lease_seconds: 3 * 3600 });
    expect(refused.isError).toBe(true);
    expect(refused.json.status).toBe("refused");
    expect(refused.json.error).toContain("$1.50");
    expect(refused.json.error).toContain("OWNER_SPEND_LIMIT_PER_DAY_USD $1.00");
    expect(await deps.db.select().from(simulatorInstances).where(eq(simulatorInstances.state, "loading"))).toHaveLength(0);
    expect(await deps.db.select().from(leases)).toHaveLength(0);

    // One hour at $0.50 fits; the operator's activity log names the client.
    const rented = await call(client, "rent_instance", RENT);
    expect(rented.json.status).toBe("succeeded");
    // The budget sums the instances the owner holds (at the offer's $/h until the provider lists them).
    const price = rented.json.pricePerHour as number;
    expect((await call(client, "rent_instance", RENT)).json.status).toBe("succeeded");
    const third = await call(client, "rent_instance", RENT);
    expect(third.json.status).toBe("refused");
    expect(third.json.error).toContain(`cost $${(2 * price).toFixed(2)} today`);
    expect(third.json.error).toContain(`$${(2 * price + 0.5).toFixed(2)} in all`);
    // Money moved without a human deciding: told once, with the $/h.
    const [told] = await deps.db
      .select()
      .from(notifications)
      .where(eq(notifications.dedupKey, `money:${rented.json.actionId}`));
    expect(told!.title).toBe(`Rented ${rented.json.instanceId}: a new instance on a lease (its $/h is in the reason)`);
    expect(told!.body).toContain(`at $${rented.json.pricePerHour}/h for ada`);
    const activity = await deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "mcp_action"));
    expect(activity.map((a) => [a.operatorName, a.subject])).toContainEqual([
      "ada",
      `rent ${rented.json.instanceId} #${rented.json.actionId} via codex`,
    ]);
    await client.close();
  });

  it("refuses an owner's 6th rental within an hour, and rents again an hour later", async () => {
    const { deps, client } = await setup();
    deps.clock.set(Date.parse("2026-12-06T08:00:00Z"));
    for (let i = 0; i < 5; i++)
      expect((await call(client, "rent_instance", { ...RENT, lease_seconds: 600 })).json.status).toBe("succeeded");
    const sixth = await call(client, "rent_instance", { ...RENT, lease_seconds: 600 });
    expect(sixth.json.status).toBe("refused");
    expect(sixth.json.error).toMatch(/already rented 5 instances in the last hour/);
    expect(await deps.db.select().from(leases)).toHaveLength(5);

    deps.clock.advance(3600_000 + 1);
    expect((await call(client, "rent_instance", { ...RENT, lease_seconds: 600 })).json.status).toBe("succeeded");
    await client.close();
  });

  it("files an approval for a rental APPROVAL_REQUIRED_ACTIONS names; approving it rents what was asked, on the lease", async () => {
    const { deps, client, app } = await setup({ APPROVAL_REQUIRED_ACTIONS: "rent" });
    const asked = await call(client, "rent_instance", RENT);
    expect(asked.json.status).toBe("awaiting_approval");
    expect(await deps.db.select().from(leases)).toHaveLength(0);
    const pending = await call(client, "list_approvals", { status: "pending" });
    const approval = (pending.json.approvals as Json[])[0]!;
    expect(approval).toMatchObject({ kind: "rent" });
    expect(approval.reason).toContain("fine-tune the classifier");

    const res = await app.request(`/api/agents/default/approvals/${approval.id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(res.status).toBe(200);
    const [lease] = await deps.db.select().from(leases);
    expect(lease).toMatchObject({ owner: "ada", client: "codex", purpose: RENT.purpose, endedAt: null });
    const [sim] = await deps.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, lease!.instanceId));
    expect(sim!.label).toMatch(/^fw-lease owner=ada until=/);
    await client.close();
  });

  it("in shadow mode records a rental as proposed and rents nothing", async () => {
    const { deps, client } = await setup({ AGENT_MODE: "shadow" });
    const proposed = await call(client, "rent_instance", RENT);
    expect(proposed.json.status).toBe("proposed");
    expect(await deps.db.select().from(leases)).toHaveLength(0);
    expect(await deps.db.select().from(simulatorInstances).where(eq(simulatorInstances.state, "loading"))).toHaveLength(0);
    await client.close();
  });

  it("acts only on an instance the caller leases", async () => {
    const { deps, client, app } = await setup();
    const { token } = await createOperator(deps.db, { name: "bo", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const fetchFn = ((input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init))) as typeof fetch;
    const other = await connect("http://fleetwarden.test/api/agents/default/mcp", token, "cursor", fetchFn);
    const theirs = (await call(other, "rent_instance", RENT)).json.instanceId as string;

    const refused = await call(client, "request_action", { instance_id: theirs, kind: "stop", reason: "not mine" });
    expect(refused.isError).toBe(true);
    expect(refused.json.error).toBe(`instance ${theirs} is leased by bo, not by ada`);
    expect((await call(client, "release_instance", { instance_id: theirs })).isError).toBe(true);
    expect((await call(client, "extend_lease", { instance_id: theirs, lease_seconds: 600 })).isError).toBe(true);
    const unleased = await call(client, "request_action", { instance_id: "sim-1", kind: "stop", reason: "never leased" });
    expect(unleased.json.error).toMatch(/not leased through fleetwarden/);

    const rented = await call(client, "rent_instance", RENT);
    const rebooted = await call(client, "request_action", { instance_id: rented.json.instanceId, kind: "reboot", reason: "stuck" });
    expect(rebooted.json.status).toBe("succeeded");
    await client.close();
    await other.close();
  });
});
