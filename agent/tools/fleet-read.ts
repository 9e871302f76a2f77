/**
 * Read-only fleet tools: the provider's live view (list_instances, get_instance), joined with
 * what fleetwarden last recorded, and an instance's container log (get_instance_logs), so the
 * agent can see why a container exited before deciding to restart it. They never count as
 * mutations.
 */
import { z } from "zod";
import { listInstanceEvents } from "../../fleet/instances/list-instances.ts";
import { instanceEconomics } from "../../fleet/economics/instance-economics.ts";
import { INSTANCE_STATES, type FleetInstance } from "../../fleet/providers/provider.ts";
import { defineTool, instanceId, toolError } from "./tool.ts";

function present(i: FleetInstance) {
  return {
    id: i.id,
    state: i.state,
    label: i.label,
    gpu: i.gpuName ? `${i.gpuCount ?? 1}x ${i.gpuName}` : null,
    pricePerHour: i.pricePerHour,
    statusMessage: i.statusMessage,
    startedAt: i.startedAt === null ? null : new Date(i.startedAt).toISOString(),
  };
}

export const listInstancesTool = defineTool({
  name: "list_instances",
  description: "List the fleet's instances as the provider reports them now, optionally only those in one state.",
  schema: z.object({ state: z.enum(INSTANCE_STATES).optional().describe("Only instances in this state") }).strict(),
  async run({ deps }, args) {
    try {
      const all = await deps.provider.list();
      const shown = args.state ? all.filter((i) => i.state === args.state) : all;
      return { output: { count: shown.length, instances: shown.map(present) }, mutated: false };
    } catch (err) {
      return toolError(`the provider could not list instances: ${err instanceof Error ? err.message : String(err)}`);
    }
  },
});

export const getInstanceTool = defineTool({
  name: "get_instance",
  description:
    "Get one instance as the provider reports it now, with its recent state history, its telemetry (GPU utilisation, whether it is idle and why, its progress counter and whether it is stalled and why) and its estimated spend.",
  schema: z.object({ instance_id: instanceId }).strict(),
  async run({ deps, agentId }, args) {
    try {
      const live = await deps.provider.get(args.instance_id);
      if (!live) return toolError(`unknown instance: ${args.instance_id}`);
      const history = await listInstanceEvents(deps, agentId, args.instance_id, 5);
      const economics = await instanceEconomics(deps, agentId, args.instance_id);
      return {
        output: {
          ...present(live),
          recentStates: history.map((h) => ({ to: h.toState, from: h.fromState, at: h.at, source: h.source, message: h.message })),
          ...economics,
        },
        mutated: false,
      };
    } catch (err) {
      return toolError(`the provider could not get instance ${args.instance_id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  },
});

/** Characters of log the tool returns at most: the tail, well inside the tool output cap. */
export const LOG_TAIL_MAX_CHARS = 4000;
/** Lines from the end of the log when none are asked for (the tool's default; the dashboard's too). */
export const LOG_TAIL_DEFAULT_LINES = 100;

export const getInstanceLogsTool = defineTool({
  name: "get_instance_logs",
  needs: "logs",
  description:
    "Read the end of an instance's container log (for example why it exited). Returns at most the last tail_lines lines, cut to the last 4000 characters.",
  schema: z
    .object({
      instance_id: instanceId,
      tail_lines: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(LOG_TAIL_DEFAULT_LINES)
        .describe("How many lines from the end of the log (1-1000, default 100)"),
    })
    .strict(),
  async run({ deps }, args) {
    try {
      const logs = await deps.provider.logs(args.instance_id, { tailLines: args.tail_lines, maxChars: LOG_TAIL_MAX_CHARS });
      return { output: { instanceId: args.instance_id, truncated: logs.truncated, log: logs.text }, mutated: false };
    } catch (err) {
      return toolError(
        `the provider could not get the logs of instance ${args.instance_id}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  },
});
