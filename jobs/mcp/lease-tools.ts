/**
 * The MCP server's write tools (issue #35, items 1 and 2), offered to the operator role and up:
 * rent_instance, extend_lease, release_instance, request_action. Every provider call goes through
 * executeAction (fleet/actions/actions.ts), decided as a model's would be (decidedBy `llm`, model
 * `mcp:<client>`), so approvals, shadow mode, the spend limit, the owner budget and the bounds hold
 * as they do for the agent's own LLM; the record names the operator, and the operator's activity
 * log gets one `mcp_action` row per new action. An instance the caller does not lease is refused
 * before anything is asked (the caller acts only on what it owns).
 *
 * Bounds: one executeAction per call (a repeated idempotency key answers with its record); rentals
 * are bounded per owner per hour by the action table ("owner rentals per hour").
 */
import { labelAsRented } from "../../fleet/providers/scoped-provider.ts";
import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { executeAction } from "../../fleet/actions/actions.ts";
import type { ActionKind, ActionRequest, ActionResult } from "../../fleet/actions/action-types.ts";
import { leaseLabel } from "../../fleet/actions/rent.ts";
import { endLease, extendLease, leaseOf, type Lease } from "../../fleet/leases/leases.ts";
import { activityInsert } from "../../auth/activity.ts";
import { storedSettings } from "../../runtime/agent-settings.ts";
import { iso } from "../../runtime/time.ts";
import { answer, presentLease } from "./read-tools.ts";
import type { McpCaller } from "./mcp-caller.ts";

/** The longest lease one call asks for (a week); extending is one call. */
export const MAX_LEASE_S = 7 * 24 * 3600;
/** The shortest lease (a minute). */
export const MIN_LEASE_S = 60;

const leaseSeconds = z
  .number()
  .int()
  .min(MIN_LEASE_S, `must be at least ${MIN_LEASE_S}`)
  .max(MAX_LEASE_S, `must be at most ${MAX_LEASE_S}`);
const idempotencyKey = z
  .string()
  .regex(/^[\w.:-]{8,128}$/, "must be 8-128 word characters")
  .optional()
  .describe("same key = same action: a repeat answers with the recorded result");

const WRITE = { readOnlyHint: false, openWorldHint: true } as const;

function newKey(tool: string, given: string | undefined): string {
  return `mcp:${given ?? `${tool}:${crypto.randomUUID()}`}`;
}

/** One action through the action table, as the MCP client decided it for its operator. */
async function act(
  caller: McpCaller,
  request: Omit<ActionRequest, "agentId" | "runId" | "decidedBy" | "model" | "operator">,
): Promise<ActionResult> {
  const { deps, agentId, who, client } = caller;
  const result = await executeAction(deps, {
    ...request,
    agentId,
    runId: null,
    decidedBy: "llm",
    model: `mcp:${client}`,
    operator: who.name,
  });
  if (!result.repeated && result.actionId)
    await activityInsert(deps.db, who, {
      action: "mcp_action",
      agentId,
      subject: `${request.kind} ${result.instanceId ?? request.instanceId} #${result.actionId} via ${client}`,
      at: deps.clock.now(),
    });
  return result;
}

/** The caller's open lease of the instance, or the refusal to answer with. */
async function ownLease(caller: McpCaller, instanceId: string): Promise<Lease | string> {
  const lease = await leaseOf(caller.deps, caller.agentId, instanceId);
  if (!lease) return `instance ${instanceId} is not leased through fleetwarden: only an instance you rented can be acted on here`;
  if (lease.owner !== caller.who.name) return `instance ${instanceId} is leased by ${lease.owner}, not by ${caller.who.name}`;
  if (lease.endedAt !== null) return `the lease of ${instanceId} ended (${lease.endReason}) at ${iso(lease.endedAt)}`;
  return lease;
}

const failed = (r: ActionResult) => r.status !== "succeeded" && r.status !== "awaiting_approval" && r.status !== "proposed";

export function registerLeaseTools(server: McpServer, caller: McpCaller): void {
  const { deps, agentId, who } = caller;

  server.registerTool(
    "rent_instance",
    {
      description:
        "Rent a GPU instance on a lease: the cheapest offer of the GPU model and count within max_price_per_hour. The lease ends after lease_seconds unless extended (extend_lease); release it when done (release_instance). May need a human's approval, or be refused past the owner's daily budget.",
      inputSchema: {
        gpu_name: z.string().trim().min(1).max(100).describe('GPU model as the provider names it, e.g. "RTX 4090"'),
        gpu_count: z.number().int().min(1).max(16),
        max_price_per_hour: z.number().positive().max(1000).describe("the most to pay per hour, USD"),
        image: z.string().trim().min(1).max(500).describe("container image"),
        disk_gb: z.number().int().min(1).max(10000).optional(),
        lease_seconds: leaseSeconds,
        purpose: z.string().trim().min(1).max(500).describe("what the instance is for, shown to humans"),
        idempotency_key: idempotencyKey,
      },
      annotations: WRITE,
    },
    async (args) => {
      const key = newKey("rent", args.idempotency_key);
      const labelPrefix = storedSettings(caller.agent.settings).instanceFilter?.labelPrefix;
      const result = await act(caller, {
        instanceId: `rent:${key}`,
        kind: "rent",
        idempotencyKey: key,
        reason: `rented for ${who.name} via ${caller.client}: ${args.purpose}`,
        rent: {
          gpuName: args.gpu_name,
          gpuCount: args.gpu_count,
          maxPricePerHour: args.max_price_per_hour,
          image: args.image,
          diskGb: args.disk_gb ?? null,
          leaseSeconds: args.lease_seconds,
          purpose: args.purpose,
          owner: who.name,
          client: caller.client,
          ...(labelPrefix ? { labelPrefix } : {}),
        },
      });
      const lease = result.instanceId ? await leaseOf(deps, agentId, result.instanceId) : null;
      return answer({ ...result, leaseEndsAt: iso(result.leaseEndsAt ?? null), lease: presentLease(lease) }, failed(result));
    },
  );

  server.registerTool(
    "extend_lease",
    {
      description: "Extend your lease of an instance: it then ends lease_seconds from now. The provider label is updated too.",
      inputSchema: { instance_id: z.string().min(1).max(200), lease_seconds: leaseSeconds, idempotency_key: idempotencyKey },
      annotations: WRITE,
    },
    async (args) => {
      const own = await ownLease(caller, args.instance_id);
      if (typeof own === "string") return answer({ error: own }, true);
      const endsAt = deps.clock.now() + args.lease_seconds * 1000;
      const lease = await extendLease(deps, agentId, args.instance_id, endsAt);
      if (!lease) return answer({ error: `the lease of ${args.instance_id} ended meanwhile` }, true);
      const labelPrefix = storedSettings(caller.agent.settings).instanceFilter?.labelPrefix;
      // The label carries the lease end where the provider keeps it; the lease is extended whatever it answers.
      const label = deps.provider.capabilities.has("label")
        ? await act(caller, {
            instanceId: args.instance_id,
            kind: "label",
            // As the rental was labelled (an ids filter claims its own rentals by `fw-own:<agent>:`).
            label: labelAsRented(deps.provider, leaseLabel({ owner: lease.owner, ...(labelPrefix ? { labelPrefix } : {}) }, endsAt)),
            idempotencyKey: newKey("extend", args.idempotency_key),
            reason: `lease of ${args.instance_id} extended by ${who.name} via ${caller.client}`,
          })
        : null;
      return answer({ instanceId: args.instance_id, lease: presentLease(lease), label });
    },
  );

  server.registerTool(
    "release_instance",
    {
      description:
        'Release an instance you leased: "stop" (the default) stops it and ends the lease; "destroy" asks a human to approve destroying it (the lease ends once it is gone).',
      inputSchema: {
        instance_id: z.string().min(1).max(200),
        how: z.enum(["stop", "destroy"]).optional(),
        reason: z.string().trim().max(500).optional(),
        idempotency_key: idempotencyKey,
      },
      annotations: { ...WRITE, destructiveHint: true },
    },
    async (args) => {
      const own = await ownLease(caller, args.instance_id);
      if (typeof own === "string") return answer({ error: own }, true);
      const how = args.how ?? "stop";
      const why = `released by ${who.name} via ${caller.client}${args.reason ? `: ${args.reason}` : ""}`;
      const result = await act(caller, {
        instanceId: args.instance_id,
        kind: how,
        idempotencyKey: newKey(`release-${how}`, args.idempotency_key),
        reason: why,
        // A destroy through MCP is always a human's decision (issue #35: "a destroy only by approval").
        ...(how === "destroy" ? { askHuman: `${who.name}'s MCP client (${caller.client}) asks to destroy a leased instance` } : {}),
      });
      const lease = result.status === "succeeded" ? await endLease(deps, agentId, args.instance_id, "released") : own;
      return answer({ ...result, lease: presentLease(lease) }, failed(result));
    },
  );

  server.registerTool(
    "request_action",
    {
      description: "Start, stop or reboot an instance you leased, through fleetwarden's action table (approvals and limits apply).",
      inputSchema: {
        instance_id: z.string().min(1).max(200),
        kind: z.enum(["start", "stop", "reboot"]),
        reason: z.string().trim().min(1).max(500),
        idempotency_key: idempotencyKey,
      },
      annotations: WRITE,
    },
    async (args) => {
      const own = await ownLease(caller, args.instance_id);
      if (typeof own === "string") return answer({ error: own }, true);
      const result = await act(caller, {
        instanceId: args.instance_id,
        kind: args.kind satisfies ActionKind,
        idempotencyKey: newKey(args.kind, args.idempotency_key),
        reason: `${args.reason} (${who.name} via ${caller.client})`,
      });
      return answer(result, failed(result));
    },
  );
}
