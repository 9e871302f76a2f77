/**
 * Per-agent settings: the rows of the settings table with a per-agent key (runtime/settings/),
 * which one agent may set differently from the environment's defaults. Validated with zod like
 * configuration; `configForAgent` folds them over the host's Config so the rest of the code reads
 * one Config and never knows settings exist. Secrets (channel URLs carry tokens, a provider
 * setting its API key) are the rows with a mask: `maskSettings` is what the API and the dashboard
 * show, and `keepMaskedSecrets` turns a mask sent back unchanged into the stored secret again (a
 * form or a PATCH that did not retype a secret must not overwrite it). Every text is plain text
 * (runtime/plain-text.ts): `gpt\u0000-4o` is refused, not sent to the LLM server.
 */
import { z } from "zod";
import type { Config } from "./config.ts";
import type { instanceFilter } from "./settings/forms.ts";
import { AGENT_ROWS, getPath, setPath, type AgentRow, type RowAgentSettings } from "./settings/table.ts";

export { maskKey, maskUrl } from "./settings/forms.ts";

export type InstanceFilter = z.infer<typeof instanceFilter>;
export type AgentSettings = RowAgentSettings;

/** The schema of one level of keys (`channels.slack` makes `channels` an object of its own). */
function objectOf(rows: readonly { path: string[]; schema: z.ZodType }[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  const nested = new Map<string, { path: string[]; schema: z.ZodType }[]>();
  for (const row of rows) {
    const [head, ...rest] = row.path as [string, ...string[]];
    if (rest.length === 0) shape[head] = row.schema.optional();
    else nested.set(head, [...(nested.get(head) ?? []), { path: rest, schema: row.schema }]);
  }
  for (const [head, inner] of nested) shape[head] = objectOf(inner).optional();
  return z.object(shape).strict();
}

export const agentSettingsSchema = objectOf(
  AGENT_ROWS.map((row) => ({ path: row.agent.key.split("."), schema: row.agent.schema })),
) as unknown as z.ZodType<AgentSettings>;

/** An agent's value as it lands in Config (the row's own conversion, seconds to milliseconds and so on). */
export function landed(row: AgentRow, value: unknown): unknown {
  const to = (row.agent.to ?? row.to) as ((value: unknown) => unknown) | undefined;
  return to ? to(value) : value;
}

/** The host's Config with this agent's settings laid over it (unset settings keep the default). */
export function configForAgent(config: Config, settings: AgentSettings): Config {
  let folded = config;
  for (const row of AGENT_ROWS) {
    const value = getPath(settings, row.agent.key);
    if (value === undefined || row.agent.fold === false || !row.at) continue;
    folded = setPath(folded, row.at, landed(row, value));
  }
  const channels = (settings as { channels?: Record<string, unknown> }).channels;
  const agentChannels = Object.keys(channels ?? {}).filter((name) => typeof channels?.[name] === "string");
  return agentChannels.length ? { ...folded, agentChannels } : folded;
}

/** Whether an instance belongs to the agent whose filter this is. */
export function instanceInFilter(
  filter: InstanceFilter | undefined,
  instance: { id: string; label: string | null },
  agentId?: string,
): boolean {
  if (!filter) return true;
  // An ids filter also claims the agent's own rentals: labelled `fw-own:<agent>:` when rented (fleet/providers/scoped-provider.ts).
  if (filter.ids)
    return filter.ids.includes(instance.id) || (agentId !== undefined && (instance.label ?? "").startsWith(ownLabelPrefix(agentId)));
  return (instance.label ?? "").startsWith(filter.labelPrefix ?? "");
}

/** The label prefix an agent with an ids filter gives what it rents, so its filter claims it. */
export function ownLabelPrefix(agentId: string): string {
  return `fw-own:${agentId}:`;
}

const MASKED = AGENT_ROWS.filter((row) => row.agent.mask);

/** Settings as the API shows them: every secret masked, everything else as stored. */
export function maskSettings(settings: AgentSettings): AgentSettings {
  let shown = settings;
  for (const row of MASKED) {
    const value = getPath(settings, row.agent.key);
    if (value) shown = setPath(shown, row.agent.key, row.agent.mask!.show(value as never));
  }
  return shown;
}

/**
 * New settings with every secret that is exactly the mask of the stored one put back to the
 * stored secret: the sender saw only the mask and did not change it. Any other value replaces it.
 */
export function keepMaskedSecrets(next: AgentSettings, stored: AgentSettings): AgentSettings {
  let kept = next;
  for (const row of MASKED) {
    const sent = getPath(next, row.agent.key);
    const was = getPath(stored, row.agent.key);
    if (sent !== undefined && was !== undefined) kept = setPath(kept, row.agent.key, row.agent.mask!.keep(sent as never, was as never));
  }
  return kept;
}

/** The stored settings of an agent row (validated when written; anything else reads as none). */
export function storedSettings(settings: unknown): AgentSettings {
  const parsed = agentSettingsSchema.safeParse(settings);
  return parsed.success ? parsed.data : {};
}
