/**
 * Per-agent settings: the few knobs one agent may set differently from the environment's defaults
 * (model, context budget, debounce windows, approval-required actions, wake limits, notification
 * channels, which of the provider account's instances are its own, shadow mode, the idle-stop
 * delay and the daily spend limit). Validated with zod like configuration; `configForAgent` folds
 * them over the host's Config so the rest of the code reads one Config and never knows settings
 * exist. Channel URLs carry tokens and a provider setting its API key, so `maskSettings` is what
 * the API and the dashboard show, and `keepMaskedSecrets` turns a mask sent back unchanged into
 * the stored secret again (a form or a PATCH that did not retype a secret must not overwrite it).
 * Every text is plain text (runtime/plain-text.ts): `gpt\u0000-4o` is refused, not sent to the LLM server.
 */
import { z } from "zod";
import { APPROVABLE_ACTIONS, PROVIDERS, type Config } from "./config.ts";
import { plainText } from "./plain-text.ts";
import {
  AGENT_MODEL_MAX_CHARS, CONTEXT_BUDGET_MAX_TOKENS, DEBOUNCE_MAX_MS, httpUrl, IDLE_STOP_AFTER_MAX_S, MAX_PENDING_WAKES_MAX,
  SPEND_LIMIT_PER_DAY_MAX_USD, token, WINDOW_MAX_S,
} from "./setting-bounds.ts";

/** A whole number within the bounds of its environment counterpart (runtime/setting-bounds.ts). */
const bounded = (min: number, max: number) => z.number().int("must be a whole number").min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/**
 * Which instances an agent acts on, when several agents share one provider account: those whose
 * label starts with `labelPrefix`, or exactly the listed `ids`. Unset: every instance.
 */
const instanceFilter = z
  .object({
    labelPrefix: plainText(z.string().min(1, "must not be empty").max(64)).optional(),
    ids: z.array(plainText(z.string().min(1).max(64))).min(1, "must list at least one id").max(1000).optional(),
  })
  .strict()
  .refine((f) => (f.labelPrefix === undefined) !== (f.ids === undefined), "must give exactly one of labelPrefix or ids");

export type InstanceFilter = z.infer<typeof instanceFilter>;

export const agentSettingsSchema = z
  .object({
    model: plainText(z.string().trim().min(1, "must not be empty").max(AGENT_MODEL_MAX_CHARS, `must be at most ${AGENT_MODEL_MAX_CHARS} characters`)).optional(),
    /** The minimum depends on the prompt's size, so it is checked where settings are accepted (jobs/agent-admin-requests.ts). */
    contextBudgetTokens: bounded(1, CONTEXT_BUDGET_MAX_TOKENS).optional(),
    debounceHumanMs: bounded(0, DEBOUNCE_MAX_MS).optional(),
    debounceStateMs: bounded(0, DEBOUNCE_MAX_MS).optional(),
    approvalRequired: z.array(z.enum(APPROVABLE_ACTIONS)).max(APPROVABLE_ACTIONS.length).optional(),
    maxPendingWakes: bounded(1, MAX_PENDING_WAKES_MAX).optional(),
    channels: z
      .object({ slack: httpUrl.optional(), discord: httpUrl.optional(), ntfy: httpUrl.optional() })
      .strict()
      .optional(),
    /** DISCORD_THREAD_NAME for this agent's Discord channel (a forum channel's webhook needs one). */
    discordThreadName: plainText(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters (Discord's limit)")).optional(),
    instanceFilter: instanceFilter.optional(),
    /** AGENT_MODE for this agent: `shadow` records decisions as proposals and never acts. */
    mode: z.enum(["act", "shadow"]).optional(),
    /** IDLE_STOP_AFTER_S for this agent (0 = never stop an idle instance). */
    idleStopAfterS: bounded(0, IDLE_STOP_AFTER_MAX_S).optional(),
    /** SPEND_LIMIT_PER_DAY_USD for this agent; null removes the environment's limit. */
    spendLimitPerDayUsd: z.number().positive("must be more than 0").max(SPEND_LIMIT_PER_DAY_MAX_USD, `must be at most ${SPEND_LIMIT_PER_DAY_MAX_USD}`).nullable().optional(),
    /** REPLACE_AFTER_S for this agent (0 = never propose a replacement). */
    replaceAfterS: bounded(0, WINDOW_MAX_S).optional(),
    /**
     * This agent's own provider account (PROVIDER and its key in the environment otherwise). The
     * key is a secret: shown masked, kept when the mask is sent back.
     */
    provider: z
      .object({ kind: z.enum(PROVIDERS), apiKey: token.min(1).max(512).optional(), url: httpUrl.optional() })
      .strict()
      .optional(),
  })
  .strict();

export type AgentSettings = z.infer<typeof agentSettingsSchema>;

/** The host's Config with this agent's settings laid over it (unset settings keep the default). */
export function configForAgent(config: Config, settings: AgentSettings): Config {
  return {
    ...config,
    llm: config.llm && settings.model ? { ...config.llm, model: settings.model } : config.llm,
    contextBudgetTokens: settings.contextBudgetTokens ?? config.contextBudgetTokens,
    debounceHumanMs: settings.debounceHumanMs ?? config.debounceHumanMs,
    debounceStateMs: settings.debounceStateMs ?? config.debounceStateMs,
    approvalRequired: settings.approvalRequired ?? config.approvalRequired,
    maxPendingWakes: settings.maxPendingWakes ?? config.maxPendingWakes,
    channels: { ...config.channels, ...settings.channels },
    discordThreadName: settings.discordThreadName ?? config.discordThreadName,
    mode: settings.mode ?? config.mode,
    replace: { ...config.replace, afterMs: settings.replaceAfterS !== undefined ? settings.replaceAfterS * 1000 : config.replace.afterMs },
    economics: {
      ...config.economics,
      idleStopAfterMs: settings.idleStopAfterS !== undefined ? settings.idleStopAfterS * 1000 : config.economics.idleStopAfterMs,
      spendLimitPerDayUsd: settings.spendLimitPerDayUsd !== undefined ? settings.spendLimitPerDayUsd : config.economics.spendLimitPerDayUsd,
    },
  };
}

/** Whether an instance belongs to the agent whose filter this is. */
export function instanceInFilter(filter: InstanceFilter | undefined, instance: { id: string; label: string | null }): boolean {
  if (!filter) return true;
  if (filter.ids) return filter.ids.includes(instance.id);
  return (instance.label ?? "").startsWith(filter.labelPrefix ?? "");
}

/** A channel URL shown without its secret parts: scheme, host and a hint of the path. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return "…";
  }
}

/** A provider API key shown without its secret: its last four characters, when it is long enough to spare them. */
export function maskKey(key: string): string {
  return key.length >= 16 ? `…${key.slice(-4)}` : "…";
}

/** Settings as the API shows them: channel URLs and the provider's API key masked, everything else as stored. */
export function maskSettings(settings: AgentSettings): AgentSettings {
  const provider = settings.provider?.apiKey ? { ...settings.provider, apiKey: maskKey(settings.provider.apiKey) } : settings.provider;
  const masked = provider ? { ...settings, provider } : settings;
  if (!settings.channels) return masked;
  const channels = Object.fromEntries(Object.entries(settings.channels).map(([name, url]) => [name, url ? maskUrl(url) : url]));
  return { ...masked, channels };
}

/**
 * New settings with every channel URL that is exactly the mask of the stored one put back to the
 * stored URL: the sender saw only the mask and did not change it. Any other value replaces it.
 * Likewise the provider's API key, when the provider kind is unchanged.
 */
export function keepMaskedSecrets(next: AgentSettings, stored: AgentSettings): AgentSettings {
  const kept = keepMaskedKey(next, stored);
  if (!kept.channels || !stored.channels) return kept;
  const storedChannels = stored.channels;
  const channels = Object.fromEntries(
    Object.entries(kept.channels).map(([name, url]) => {
      const was = storedChannels[name as keyof typeof storedChannels];
      return [name, url !== undefined && was !== undefined && url === maskUrl(was) ? was : url];
    }),
  );
  return { ...kept, channels };
}

function keepMaskedKey(next: AgentSettings, stored: AgentSettings): AgentSettings {
  const key = next.provider?.apiKey;
  const storedKey = stored.provider?.apiKey;
  if (!key || !storedKey || next.provider!.kind !== stored.provider!.kind || key !== maskKey(storedKey)) return next;
  return { ...next, provider: { ...next.provider!, apiKey: storedKey } };
}

/** The stored settings of an agent row (validated when written; anything else reads as none). */
export function storedSettings(settings: unknown): AgentSettings {
  const parsed = agentSettingsSchema.safeParse(settings);
  return parsed.success ? parsed.data : {};
}
