/**
 * An agent's effective settings on its Agents page: each setting's value as the agent runs with
 * it and where that value comes from — the agent's own setting, or the environment's default
 * (naming the variable) — so a channel configured only in the environment shows as configured
 * ("from environment", its URL masked with maskUrl) instead of looking empty.
 */
import type { Config } from "../../runtime/config.ts";
import { maskUrl, type AgentSettings } from "../../runtime/agent-settings.ts";

export interface EffectiveSetting {
  setting: string;
  variable: string;
  value: string;
  from: "agent" | "environment";
}

const optional = (value: string | null | undefined, none: string) => (value ? value : none);

/** One row per setting: the agent's value when it sets one, else the environment's. */
export function effectiveSettings(env: Config, settings: AgentSettings): EffectiveSetting[] {
  const row = <K extends keyof AgentSettings>(setting: K, variable: string, show: (value: AgentSettings[K] | undefined, fromAgent: boolean) => string, envValue: AgentSettings[K] | undefined): EffectiveSetting => {
    const fromAgent = settings[setting] !== undefined;
    return { setting, variable, value: show(fromAgent ? settings[setting] : envValue, fromAgent), from: fromAgent ? "agent" : "environment" };
  };
  const channel = (name: "slack" | "discord" | "ntfy", variable: string): EffectiveSetting => {
    const own = settings.channels?.[name];
    const url = own ?? env.channels[name];
    return { setting: `channels.${name}`, variable, value: url ? maskUrl(url) : "not configured", from: own !== undefined ? "agent" : "environment" };
  };
  return [
    row("model", "AGENT_MODEL", (v) => (env.llm ? String(v) : "no LLM configured: the rules policy decides"), env.llm?.model),
    row("mode", "AGENT_MODE", (v) => String(v), env.mode),
    row("approvalRequired", "APPROVAL_REQUIRED_ACTIONS", (v) => (v && v.length ? v.join(", ") : "none"), [...env.approvalRequired] as AgentSettings["approvalRequired"]),
    row("contextBudgetTokens", "CONTEXT_BUDGET_TOKENS", (v) => `${v} tokens`, env.contextBudgetTokens),
    row("debounceHumanMs", "DEBOUNCE_HUMAN_MS", (v) => `${v} ms`, env.debounceHumanMs),
    row("debounceStateMs", "DEBOUNCE_STATE_MS", (v) => `${v} ms`, env.debounceStateMs),
    row("maxPendingWakes", "MAX_PENDING_WAKES", (v) => String(v), env.maxPendingWakes),
    row("idleStopAfterS", "IDLE_STOP_AFTER_S", (v) => (v ? `${v} s` : "never"), env.economics.idleStopAfterMs / 1000),
    row("spendLimitPerDayUsd", "SPEND_LIMIT_PER_DAY_USD", (v) => (v ? `$${v} per day` : "no limit"), env.economics.spendLimitPerDayUsd),
    row("replaceAfterS", "REPLACE_AFTER_S", (v) => (v ? `${v} s` : "never"), env.replace.afterMs / 1000),
    row("provider", "PROVIDER", (v) => String(v?.kind), { kind: env.provider }),
    channel("slack", "SLACK_WEBHOOK_URL"),
    channel("discord", "DISCORD_WEBHOOK_URL"),
    channel("ntfy", "NTFY_URL"),
    row("discordThreadName", "DISCORD_THREAD_NAME", (v) => optional(v, "none"), env.discordThreadName),
  ];
}

export function EffectiveSettings({ rows }: { rows: readonly EffectiveSetting[] }) {
  return (
    <div class="table-wrap" tabindex={0} role="region" aria-label="Effective settings">
      <table data-testid="effective-settings">
        <caption class="visually-hidden">Effective settings and where each comes from</caption>
        <thead>
          <tr>
            <th scope="col">Setting</th>
            <th scope="col">Value</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr data-setting={r.setting}>
              <th scope="row">{r.setting}</th>
              <td>{r.value}</td>
              <td>{r.from === "agent" ? "this agent's setting" : `from environment (${r.variable})`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
