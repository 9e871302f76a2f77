/**
 * Instance action tools (start, stop, reboot, destroy). They go through executeAction, which owns
 * the provider call, the audit row, the approval rule (destroy files a pending approval and
 * notifies instead of acting) and the per-instance rate limit. The idempotency key is what the
 * action answers (fleet/action-key.ts), so neither a repeated call nor a run re-claiming the same
 * events acts twice, while a run answering new events can act again. The run's fence is passed.
 */
import { z } from "zod";
import { answeringActionKey } from "../../fleet/action-key.ts";
import { executeAction } from "../../fleet/actions.ts";
import type { ActionKind } from "../../fleet/action-types.ts";
import { defineTool, instanceId, reason, type AgentTool } from "./tool.ts";

function actionTool(kind: Exclude<ActionKind, "label">, name: string, description: string): AgentTool {
  return defineTool({
    name,
    description,
    schema: z.object({ instance_id: instanceId, reason }).strict(),
    async run({ deps, agentId, runId, fence, answering }, args) {
      const result = await executeAction(deps, {
        agentId,
        runId,
        instanceId: args.instance_id,
        kind,
        decidedBy: "llm",
        idempotencyKey: answeringActionKey(agentId, args.instance_id, kind, answering),
        reason: args.reason,
        fence,
      });
      const mutated = !result.repeated && (result.status === "succeeded" || result.status === "awaiting_approval");
      const note =
        result.status === "awaiting_approval"
          ? "A human must approve this; the request is filed and a human was notified. Do not retry."
          : result.status === "rate_limited"
            ? "Refused by the per-instance rate limit; tell a human if the instance keeps failing."
            : undefined;
      return { output: { ...result, ...(note ? { note } : {}) }, mutated };
    },
  });
}

export const instanceActionTools: AgentTool[] = [
  actionTool("start", "start_instance", "Start a stopped or exited instance."),
  actionTool("stop", "stop_instance", "Stop a running instance (it keeps its disk and can be started again)."),
  actionTool("reboot", "reboot_instance", "Reboot an instance that is stuck or misbehaving."),
  actionTool("destroy", "destroy_instance", "Destroy an instance for good. Needs human approval: this files the request and notifies a human."),
];
