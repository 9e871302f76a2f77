/**
 * An agent's effective settings on its Agents page: each per-agent setting's value as the agent
 * runs with it and where that value comes from — the agent's own setting, or the environment's
 * default (naming the variable) — so a channel configured only in the environment shows as
 * configured ("from environment", its URL masked) instead of looking empty. One row per per-agent
 * row of the settings table that says how to show its value (runtime/settings/).
 */
import type { Config } from "../../runtime/config.ts";
import { configForAgent, landed, type AgentSettings } from "../../runtime/agent-settings.ts";
import { AGENT_ROWS, getPath } from "../../runtime/settings/table.ts";

export interface EffectiveSetting {
  setting: string;
  variable: string;
  value: string;
  from: "agent" | "environment";
}

const SHOWN = AGENT_ROWS.filter((row) => row.agent.show && row.at);

/**
 * One row per setting: the value in the agent's own Config (the agent's when it sets one, else the
 * environment's); a setting not laid over Config shows the agent's own value, else the environment's.
 */
export function effectiveSettings(env: Config, settings: AgentSettings): EffectiveSetting[] {
  const own = configForAgent(env, settings);
  return SHOWN.map((row) => {
    const value = getPath(settings, row.agent.key);
    const fromAgent = value !== undefined;
    const inEffect = row.agent.fold === false && fromAgent ? landed(row, value) : getPath(own, row.at!);
    return { setting: row.agent.key, variable: row.name, value: row.agent.show!(inEffect), from: fromAgent ? "agent" : "environment" };
  });
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
