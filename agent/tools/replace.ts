/**
 * The `replace_instance` tool: the LLM's way to propose replacing a dead rental. The same rule
 * as the rules policy's (fleet/replacement/replacement-proposal.ts): only an instance offline, unknown or
 * gone for REPLACE_AFTER_S, or whose start failed for lack of its GPU; through executeAction, so
 * approval (by default), shadow mode, the spend gate and a human's rejection apply. When the
 * provider cannot rent (no `create` capability) it says so and a human is told once instead.
 */
import { z } from "zod";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { actionEvidence } from "../action-evidence.ts";
import { defineTool, instanceId, reason } from "./tool.ts";

export const replaceInstanceTool = defineTool({
  name: "replace_instance",
  // Offered only where the provider can rent (fleet/providers/capabilities.ts: replace needs create).
  needs: "create",
  description:
    "Propose renting a like-for-like instance on another machine for a dead one (offline, unknown or gone long enough, or its host lost the GPU).",
  schema: z.object({ instance_id: instanceId, reason }).strict(),
  async run({ deps, agentId, runId, fence, answering }, args) {
    const evidence = await actionEvidence(deps, agentId, args.instance_id, answering);
    const proposal = await proposeReplacement(
      deps,
      { agentId, runId, decidedBy: "llm", fence, evidence, ...(deps.config.llm?.model ? { model: deps.config.llm.model } : {}) },
      args.instance_id,
      `model's reason: ${args.reason}`,
    );
    if (proposal.status !== "proposed")
      return {
        output: { status: proposal.status, detail: proposal.detail, note: "Nothing was filed. Do not retry in this run." },
        mutated: proposal.status === "unsupported",
      };
    const { result } = proposal;
    const mutated = !result.repeated && (result.status === "succeeded" || result.status === "awaiting_approval");
    const note =
      result.status === "awaiting_approval"
        ? "A human must approve this replacement; the request is filed and a human was notified. Do not retry."
        : undefined;
    return { output: { ...result, replacementId: proposal.replacementId, detail: proposal.detail, ...(note ? { note } : {}) }, mutated };
  },
});
