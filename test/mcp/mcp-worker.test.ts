/**
 * The MCP server on the Worker host: the deploy bundle in workerd (test/scenarios/hosts.ts,
 * Turso via the Hrana test server), driven by the official SDK's Client over
 * StreamableHTTPClientTransport: initialize, list tools, list_instances, rent on the simulator with
 * a lease (label and lease written), extend_lease, release_instance; a viewer cannot rent; no token
 * is 401. The same flow as test/mcp/mcp-server.test.ts on Node: the SDK's web-standard transport
 * and the cfworker JSON Schema validator run inside workerd.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leases, simulatorInstances } from "../../schema/index.ts";
import type { ScenarioHost } from "../scenarios/driver.ts";
import { startWorkerScenarioHost } from "../scenarios/hosts.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

type Json = Record<string, any>;

const RENT = {
  gpu_name: "RTX 4090",
  gpu_count: 1,
  max_price_per_hour: 0.5,
  image: "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
  lease_seconds: 3600,
  purpose: "fine-tune the classifier",
};

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
  return {
    isError: result.isError === true,
    text: result.content[0]?.text ?? "",
    json: JSON.parse(result.content[0]?.text ?? "{}") as Json,
  };
}

describe("the MCP server on the Worker in workerd", { timeout: 120_000 }, () => {
  let host: ScenarioHost;
  let url: string;
  const tokens: Record<string, string> = {};

  const connect = async (token: string, name: string) => {
    const client = new Client({ name, version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    return client;
  };

  beforeAll(async () => {
    host = await startWorkerScenarioHost();
    await host.runScheduled();
    for (const [name, role] of [
      ["ada", "operator"],
      ["vic", "viewer"],
    ] as const) {
      const res = await fetch(`${host.baseUrl}/api/operators`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name, role }),
      });
      tokens[name] = ((await res.json()) as Json).token as string;
    }
    url = `${host.baseUrl}/api/agents/default/mcp`;
  }, 300_000);

  afterAll(async () => {
    await host?.close();
  });

  it("initializes, lists tools and instances, rents on a lease, extends and releases it", async () => {
    const client = await connect(tokens.ada!, "claude-code");
    expect(client.getServerVersion()?.name).toBe("fleetwarden");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["list_instances", "rent_instance", "extend_lease", "release_instance", "request_action"]),
    );
    expect(((await call(client, "list_instances")).json.instances as Json[]).length).toBe(3);

    const rented = await call(client, "rent_instance", RENT);
    expect(rented.json, rented.text).toMatchObject({ status: "succeeded", lease: { owner: "ada", client: "claude-code" } });
    const id = rented.json.instanceId as string;
    const endsAt = Date.parse(rented.json.leaseEndsAt as string);
    const sim = async () => (await host.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, id)))[0]!;
    expect((await sim()).label).toBe(`fw-lease owner=ada until=${new Date(endsAt).toISOString()}`);

    const extended = await call(client, "extend_lease", { instance_id: id, lease_seconds: 7200 });
    const newEnd = Date.parse(extended.json.lease.endsAt as string);
    expect(newEnd).toBeGreaterThan(endsAt);
    expect((await sim()).label).toBe(`fw-lease owner=ada until=${new Date(newEnd).toISOString()}`);

    const released = await call(client, "release_instance", { instance_id: id });
    expect(released.json, released.text).toMatchObject({ status: "succeeded", lease: { endReason: "released" } });
    expect((await sim()).state).toBe("stopped");
    const [lease] = await host.db.select().from(leases).where(eq(leases.instanceId, id));
    expect(lease).toMatchObject({ owner: "ada", client: "claude-code", endReason: "released" });
    await client.close();
  });

  it("offers a viewer no write tool, and answers no token with 401 JSON", async () => {
    const client = await connect(tokens.vic!, "cursor");
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("rent_instance");
    const refused = (await client.callTool({ name: "rent_instance", arguments: RENT })) as { isError?: boolean };
    expect(refused.isError).toBe(true);
    await client.close();

    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error).toMatch(/Authorization/);
  });
});
