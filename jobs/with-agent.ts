/**
 * The one place per-agent settings take effect: an entry point (a delivery, an ingest, a tick)
 * scopes the host's dependencies to one agent, and everything below reads `deps.config` and
 * `deps.provider` as usual. Config gets the agent's overrides (runtime/agent-settings.ts), the
 * provider is the agent's own account when its settings name one (fleet/providers/providers.ts) and carries
 * its instance filter (fleet/providers/scoped-provider.ts), the LLM its model.
 */
import type { Deps } from "./deps.ts";
import { agentSettingsSchema, configForAgent, type AgentSettings } from "../runtime/agent-settings.ts";
import { ScopedProvider } from "../fleet/providers/scoped-provider.ts";
import { agentProvider } from "../fleet/providers/providers.ts";
import { findAgentRecent, type AgentRow } from "../pipeline/index.ts";
import { setAgentMode } from "./agent-mode.ts";

export interface AgentScope {
  deps: Deps;
  archived: boolean;
  /** The agent's row and its validated settings, for what checks them at the door (webhook secrets, filters). */
  agent: AgentRow;
  settings: AgentSettings;
}

/** Dependencies as this agent sees them. Stored settings were validated when written. */
export function scopeToAgent(deps: Deps, agent: AgentRow): AgentScope {
  const parsed = agentSettingsSchema.safeParse(agent.settings);
  const settings = parsed.success ? parsed.data : {};
  if (!parsed.success)
    deps.log.error("ignoring invalid stored agent settings", { agentId: agent.id, error: parsed.error.issues[0]?.message });
  const config = configForAgent(deps.config, settings);
  const own = settings.provider ? agentProvider(deps.provider, settings.provider, deps.db, deps.clock, deps.config) : deps.provider;
  const scoped: Deps = {
    ...deps,
    config,
    provider: settings.instanceFilter ? new ScopedProvider(own, settings.instanceFilter, agent.id) : own,
    llm: deps.llm && settings.model && deps.llm.withModel ? deps.llm.withModel(settings.model) : deps.llm,
  };
  // The pause switch, for an operator's "pause"/"resume" in chat without an LLM (agent/rules/rules-chat.ts).
  scoped.switchMode = (who, mode) => setAgentMode(scoped, who, agent.id, mode);
  return { agent, settings, archived: agent.archivedAt !== null, deps: scoped };
}

/** The agent's scope, or null when no such agent exists (a round trip only past the row's cache). */
export async function withAgent(deps: Deps, agentId: string): Promise<AgentScope | null> {
  const agent = await findAgentRecent(deps.db, agentId, deps.clock.now());
  return agent ? scopeToAgent(deps, agent) : null;
}
