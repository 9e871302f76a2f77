/**
 * Instance action tools (start, stop, reboot, destroy). They go through executeAction, which owns
 * the provider call, the audit row, the approval rule (destroy files a pending approval and
 * notifies instead of acting) and the per-instance rate limit. The idempotency key is what the
 * action answers (fleet/actions/action-key.ts), so neither a repeated call nor a run re-claiming the same
 * events acts twice, while a run answering new events can act again. The run's fence is passed.
 *
 * Each request carries its evidence (agent/action-evidence.ts) and the model that decided it. For
 * an instance nothing in the run's input concerns it also says so (`askHuman`), and the action
 * table files an approval request instead (bounded by APPROVALS_PER_RUN / APPROVALS_PER_HOUR). The result's note tells the model what a
 * refusal, a proposal (shadow mode) or an approval request means for it. Each tool needs its
 * kind's provider capability (fleet/providers/capabilities.ts): without it, it is not offered.
 */
import { z } from "zod";
import { answeringActionKey } from "../../fleet/actions/action-key.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { ACTION_CAPABILITY } from "../../fleet/providers/capabilities.ts";
import type { ActionKind, ActionRequest, ActionResult } from "../../fleet/actions/action-types.ts";
import { actionEvidence, unconcerned } from "../action-evidence.ts";
import { defineTool, instanceId, reason, type AgentTool } from "./tool.ts";

function actionTool(kind: Exclude<ActionKind, "label">, name: string, description: string): AgentTool {
  return defineTool({
    name,
    description,
    needs: ACTION_CAPABILITY[kind],
    schema: z.object({ instance_id: instanceId, reason }).strict(),
    async run({ deps, agentId, runId, fence, answering }, args) {
      const evidence = await actionEvidence(deps, agentId, args.instance_id, answering);
      const why = await unconcerned(deps, agentId, args.instance_id, evidence);
      const request: ActionRequest = {
        agentId,
        runId,
        instanceId: args.instance_id,
        kind,
        decidedBy: "llm",
        idempotencyKey: answeringActionKey(agentId, args.instance_id, kind, answering),
        reason: args.reason,
        fence,
        evidence,
        ...(deps.config.llm?.model ? { model: deps.config.llm.model } : {}),
        // Blast radius: the action table asks a human about an instance nothing in the run concerns.
        ...(why ? { askHuman: `${why}. Model's reason: ${args.reason}` } : {}),
      };
      const result = await executeAction(deps, request);
      const mutated = !result.repeated && (result.status === "succeeded" || result.status === "awaiting_approval");
      const note = noteFor(result, why);
      return { output: { ...result, ...(note ? { note } : {}) }, mutated };
    },
  });
}

/** What the model should make of a result that did not simply succeed. */
function noteFor(result: ActionResult, unconcernedWhy: string | null): string | undefined {
  switch (result.status) {
    case "awaiting_approval":
      return `${unconcernedWhy ? `Not done: ${unconcernedWhy}. ` : ""}A human must approve this; the request is filed and a human was notified. Do not retry.`;
    case "rate_limited":
      return "Refused by the per-instance rate limit; tell a human if the instance keeps failing.";
    case "refused":
      return "Refused by a bound on this run or hour; nothing was done and a human has been told. Do not retry in this run.";
    case "proposed":
      return "Shadow mode: recorded as a proposal for a human to review; nothing was sent to the provider. Carry on as if it is pending.";
    default:
      return undefined;
  }
}

export const instanceActionTools: AgentTool[] = [
  actionTool("start", "start_instance", "Start a stopped or exited instance."),
  actionTool("stop", "stop_instance", "Stop a running instance (it keeps its disk and can be started again)."),
  actionTool("reboot", "reboot_instance", "Reboot an instance that is stuck or misbehaving."),
  actionTool(
    "destroy",
    "destroy_instance",
    "Destroy an instance for good. Needs human approval: this files the request and notifies a human.",
  ),
];
