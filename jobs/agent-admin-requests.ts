/**
 * Request shapes of the agents API (create, update), which the dashboard's form uses too; settings
 * validated like configuration, with the same bounds, and a `contextBudgetTokens` below the
 * minimum a run can work with refused like CONTEXT_BUDGET_TOKENS (jobs/context-budget.ts).
 */
import { z } from "zod";
import { agentSettingsSchema } from "../runtime/agent-settings.ts";
import { agentParam } from "./agent-requests.ts";
import { contextBudgetProblem } from "./context-budget.ts";
import { RequestError } from "./errors.ts";
import { providerSettingProblem } from "../fleet/providers.ts";
import type { AgentSettings } from "../runtime/agent-settings.ts";
import type { Config } from "../runtime/config.ts";

const settingsBody = agentSettingsSchema.superRefine((settings, ctx) => {
  const problem = settings.contextBudgetTokens === undefined ? null : contextBudgetProblem(settings.contextBudgetTokens);
  if (problem) ctx.addIssue({ code: "custom", path: ["contextBudgetTokens"], message: problem });
});

const name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

export const createAgentBody = z
  .object({ id: agentParam.shape.agent, name: name.optional(), settings: settingsBody.default({}) })
  .strict();

/**
 * A PATCH replaces `settings` as a whole (send the full settings object) and/or the name; a channel
 * URL sent back exactly as the API showed it (masked) keeps the stored one.
 */
export const patchAgentBody = z
  .object({ name: name.optional(), settings: settingsBody.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.settings !== undefined, "must change name or settings");

/**
 * Refuses (400, before anything is written) a provider setting that cannot work in this
 * deployment: a kind that needs a key with none in the setting nor the environment. Checked on the
 * settings as they will be stored (a masked key sent back is the stored key again).
 */
export function assertProviderUsable(settings: AgentSettings | undefined, config: Config): void {
  const problem = providerSettingProblem(settings?.provider, config);
  if (problem) throw new RequestError(400, `settings.provider: ${problem}`);
}
