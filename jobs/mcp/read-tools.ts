/**
 * The MCP server's read tools (issue #35, item 1): list_instances, get_instance, get_spend,
 * list_approvals. Every role may call them (a viewer reads only); each is one read of the agent's
 * own tables, the same reads the API's routes answer with, the instance's lease added.
 */
import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { listInstances } from "../../fleet/instances/list-instances.ts";
import { spendReport } from "../../fleet/economics/spend.ts";
import { APPROVAL_STATUSES, listApprovals } from "../../fleet/actions/approvals.ts";
import { leasesOf, type Lease } from "../../fleet/leases/leases.ts";
import { iso } from "../../runtime/time.ts";
import type { McpCaller } from "./mcp-caller.ts";

/** A tool's answer: its JSON as text (what every client shows) and as structured content. */
export function answer(value: unknown, isError = false) {
  return {
    content: [{ type: "text" as const, text: JSON.stringify(value) }],
    ...(isError ? { isError: true } : {}),
  };
}

export function presentLease(lease: Lease | null | undefined) {
  if (!lease) return null;
  return {
    owner: lease.owner,
    client: lease.client,
    purpose: lease.purpose,
    endsAt: iso(lease.endsAt),
    endedAt: iso(lease.endedAt),
    endReason: lease.endReason,
  };
}

const READ = { readOnlyHint: true, openWorldHint: false } as const;

export function registerReadTools(server: McpServer, caller: McpCaller): void {
  const { deps, agentId } = caller;

  const instancesWithLeases = async () => {
    const [rows, leases] = await Promise.all([listInstances(deps, agentId), leasesOf(deps, agentId)]);
    const byInstance = new Map(leases.map((l) => [l.instanceId, l]));
    return rows.map(({ recentEvents, ...row }) => ({ ...row, lease: presentLease(byInstance.get(row.id)), recentEvents }));
  };

  server.registerTool(
    "list_instances",
    {
      description: "The agent's GPU instances: state, GPU, $/h, label, lease (owner, purpose, end) and idle mark.",
      inputSchema: { mine: z.boolean().optional().describe("only instances leased by the caller") },
      annotations: READ,
    },
    async ({ mine }) => {
      const rows = await instancesWithLeases();
      const shown = rows.filter((r) => !mine || r.lease?.owner === caller.who.name).map(({ recentEvents: _events, ...row }) => row);
      return answer({ agent: agentId, instances: shown });
    },
  );

  server.registerTool(
    "get_instance",
    {
      description: "One instance of the agent, with its lease and its latest state changes.",
      inputSchema: { instance_id: z.string().min(1).max(200) },
      annotations: READ,
    },
    async ({ instance_id }) => {
      const row = (await instancesWithLeases()).find((r) => r.id === instance_id);
      if (row) return answer(row);
      // A fresh rental is leased before the provider's listing brings it in.
      const lease = (await leasesOf(deps, agentId)).find((l) => l.instanceId === instance_id);
      if (lease) return answer({ id: instance_id, state: "unknown (not listed yet)", lease: presentLease(lease) });
      return answer({ error: `unknown instance: ${instance_id}` }, true);
    },
  );

  server.registerTool(
    "get_spend",
    {
      description: "The agent's estimated spend: today, the last days, the daily limit, and the caller's leased instances.",
      inputSchema: {},
      annotations: READ,
    },
    async () => {
      const report = await spendReport(deps, agentId);
      const mine = await leasesOf(deps, agentId, { owner: caller.who.name, open: true });
      return answer({
        ...report,
        ownerSpendLimitPerDayUsd: deps.config.economics.ownerSpendLimitPerDayUsd,
        myOpenLeases: mine.map((l) => ({ instanceId: l.instanceId, ...presentLease(l) })),
      });
    },
  );

  server.registerTool(
    "list_approvals",
    {
      description: "The agent's approval requests, newest first (pending ones are waiting for a human).",
      inputSchema: { status: z.enum(APPROVAL_STATUSES).optional() },
      annotations: READ,
    },
    async ({ status }) => answer({ approvals: await listApprovals(deps, agentId, status, 50) }),
  );
}
