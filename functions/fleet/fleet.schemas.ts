/** Request shapes of the fleet routes; handlers get these parsed and typed. */
import { z } from "zod";
import { FAILURE_KINDS } from "../../fleet/providers/simulated-failures.ts";
import { ACTION_KINDS } from "../../fleet/actions/action-types.ts";

export const instanceParam = z.object({ id: z.string().regex(/^[\w.:-]{1,128}$/, "must be 1-128 word characters") });

export const instanceEventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const failBody = z.object({
  kind: z.enum(FAILURE_KINDS, {
    error: `must be one of ${FAILURE_KINDS.join(", ")}`,
  }),
});

/** An operator's own action on an instance; `label` is required for kind label (checked in jobs/operator-instance-action.ts). */
export const instanceActionBody = z.object({
  kind: z
    .enum(ACTION_KINDS, { error: `must be one of ${ACTION_KINDS.join(", ")}` })
    // A rental names no instance: it is asked through the MCP server's rent_instance (docs/mcp.md).
    .refine((k) => k !== "rent", "rent is not an action on an instance: use the MCP tool rent_instance"),
  label: z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
  note: z.string().trim().max(500, "must be at most 500 characters").optional(),
});

/** The optional Idempotency-Key header: a repeat of a key is the recorded action, not a new one. */
export const idempotencyKeyHeader = z.string().regex(/^[\w.:-]{8,128}$/, "must be 8-128 word characters");
