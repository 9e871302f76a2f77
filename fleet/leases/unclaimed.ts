/**
 * Which instances of a provider account no agent claims (issue 35, item 3): the agents on one
 * account (the same provider kind, URL and key, as jobs/with-agent.ts would build it), and the
 * instances of the account's unscoped list that none of their instance filters
 * (fleet/providers/scoped-provider.ts) selects. Pure: the orphan sweep (orphans.ts) reads the
 * rows and the list; this decides. An agent without a filter claims the whole account, so an
 * account with one needs no list at all.
 */
import { agentSettingsSchema, instanceInFilter, type AgentSettings, type InstanceFilter } from "../../runtime/agent-settings.ts";
import type { Config } from "../../runtime/config.ts";
import type { FleetInstance } from "../providers/provider.ts";

/** The account an agent's provider acts on, as a comparable text (never stored nor shown: it holds the key). */
export function accountOf(setting: AgentSettings["provider"], config: Pick<Config, "provider" | "vast" | "runpod" | "lambda">): string {
  const hostKind = config.provider === "simulator" || !config[config.provider].apiKey ? "simulator" : config.provider;
  // The same rule as fleet/providers/providers.ts agentProvider: the host's kind without a key or URL of its own is the host's account.
  const kind = !setting || (setting.kind === hostKind && !setting.apiKey && !setting.url) ? hostKind : setting.kind;
  if (kind === "simulator") return "simulator";
  const env = config[kind];
  const own = setting && setting.kind === kind ? setting : undefined;
  return JSON.stringify([kind, own?.url ?? env.url ?? "", own?.apiKey ?? env.apiKey ?? ""]);
}

export interface AgentOnAccount {
  id: string;
  /** The agent's filter; undefined: it claims every instance of the account. */
  filter: InstanceFilter | undefined;
}

/** The active agents whose provider is `account`, by id (the first is the account's sweeper). */
export function agentsOnAccount(
  rows: readonly { id: string; settings: unknown }[],
  account: string,
  config: Pick<Config, "provider" | "vast" | "runpod" | "lambda">,
): AgentOnAccount[] {
  const on: AgentOnAccount[] = [];
  for (const row of [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const parsed = agentSettingsSchema.safeParse(row.settings ?? {});
    const settings: AgentSettings = parsed.success ? parsed.data : {};
    if (accountOf(settings.provider, config) === account) on.push({ id: row.id, filter: settings.instanceFilter });
  }
  return on;
}

/** Whether some agent on the account claims every instance (then nothing can be unclaimed). */
export function claimsAll(agents: readonly AgentOnAccount[]): boolean {
  return agents.some((a) => a.filter === undefined);
}

/** The listed instances no agent's filter selects. */
export function unclaimed(listed: readonly FleetInstance[], agents: readonly AgentOnAccount[]): FleetInstance[] {
  if (claimsAll(agents)) return [];
  return listed.filter((instance) => !agents.some((a) => instanceInFilter(a.filter, instance)));
}
