/**
 * Request shapes of the agents API (create, update), which the dashboard's form uses too; settings
 * validated like configuration, with the same bounds, and a `contextBudgetTokens` below the
 * minimum a run can work with refused like CONTEXT_BUDGET_TOKENS (jobs/context-budget.ts).
 * Channel URLs must also pass runtime/outbound-url.ts (https to a public host unless
 * ALLOW_PRIVATE_URLS), which depends on the deployment, so the API and the dashboard check it with
 * `channelUrlIssue` once the body has parsed.
 */
import { z } from "zod";
import { agentSettingsSchema, keepMaskedSecrets, maskUrl, type AgentSettings } from "../runtime/agent-settings.ts";
import { channelUrlProblem } from "../runtime/outbound-url.ts";
import { plainText } from "../runtime/plain-text.ts";
import { agentParam } from "./agent-requests.ts";
import { contextBudgetProblem } from "./context-budget.ts";
import { RequestError } from "./errors.ts";
import { describeIssues } from "./validate.ts";
import { providerSettingProblem } from "../fleet/providers/providers.ts";
import type { Config } from "../runtime/config.ts";

const settingsBody = agentSettingsSchema.superRefine((settings, ctx) => {
  const problem = settings.contextBudgetTokens === undefined ? null : contextBudgetProblem(settings.contextBudgetTokens);
  if (problem) ctx.addIssue({ code: "custom", path: ["contextBudgetTokens"], message: problem });
});

const name = plainText(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters"));

export const createAgentBody = z.object({ id: agentParam.shape.agent, name: name.optional(), settings: settingsBody.default({}) }).strict();

/**
 * A PATCH changes the name and/or merges `settings` into the stored ones as a JSON Merge Patch
 * (RFC 7396, `mergeSettings`), so setting one key never wipes the others. The patch is any JSON
 * object here; what it merges into is validated as a whole (settingsBody) before anything is written.
 */
export const patchAgentBody = z
  .object({ name: name.optional(), settings: z.record(z.string(), z.unknown()).superRefine(refuseBadValues).optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.settings !== undefined, "must change name or settings")
  // The refinement in JSON Schema terms, for the API's description (jobs/openapi/).
  .meta({ minProperties: 1 });

/** The settings a PATCH's form would replace as a whole (the dashboard's form posts every field it has). */
export const replaceAgentBody = z
  .object({ name: name.optional(), settings: settingsBody.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.settings !== undefined, "must change name or settings");

/** A patch's own values, checked as if merged into no settings: a bad value is refused at its path. */
function refuseBadValues(patch: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const parsed = settingsBody.safeParse(mergePatch({}, patch));
  for (const issue of parsed.error?.issues ?? []) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * RFC 7396 JSON Merge Patch: objects merge key by key, recursively; a `null` removes the key;
 * anything else (arrays, scalars) replaces the target's value.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const merged: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}

/**
 * The settings a PATCH leaves: `patch` merged into `stored`, validated like a whole settings
 * object (a 400 naming the field otherwise, before anything is written), with a secret sent back as
 * its mask kept as stored. A key removed by `null` falls back to the environment's default.
 */
export function mergeSettings(stored: AgentSettings, patch: Record<string, unknown>): AgentSettings {
  const parsed = settingsBody.safeParse(mergePatch(stored, patch));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ["settings", ...issue.path] }));
    throw new RequestError(400, `invalid body: ${describeIssues(issues)}`);
  }
  return keepMaskedSecrets(parsed.data, stored);
}

/**
 * Refuses (400, before anything is written) a provider setting that cannot work in this
 * deployment: a kind that needs a key with none in the setting nor the environment. Checked on the
 * settings as they will be stored (a masked key sent back is the stored key again).
 */
export function assertProviderUsable(settings: AgentSettings | undefined, config: Config): void {
  const problem = providerSettingProblem(settings?.provider, config);
  if (problem) throw new RequestError(400, `settings.provider: ${problem}`);
}

/**
 * The first channel URL of `settings` this deployment may not send to, as `settings.channels.<name>:
 * <why>`, or null. A URL sent back as the mask of the stored one keeps the stored URL and is not
 * checked again (it was accepted when it was set).
 */
export function channelUrlIssue(settings: AgentSettings | undefined, stored: AgentSettings, allowPrivate: boolean): string | null {
  for (const [name, url] of Object.entries(settings?.channels ?? {})) {
    const kept = stored.channels?.[name as keyof NonNullable<AgentSettings["channels"]>];
    if (url === undefined || (kept !== undefined && (url === kept || url === maskUrl(kept)))) continue;
    const problem = channelUrlProblem(url, allowPrivate);
    if (problem) return `settings.channels.${name}: ${problem}`;
  }
  return null;
}
