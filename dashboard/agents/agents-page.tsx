/**
 * The agents page (`/agents`) and one agent's page (`/agents/:agentId`): every agent with what
 * waits for a human on it and which instances are its own; for admins, the form that creates an
 * agent, the form that edits one's settings (secrets shown masked), and archiving. Viewers and
 * operators see the same facts without the forms.
 */
import { APPROVABLE_ACTIONS } from "../../runtime/config.ts";
import type { AgentSettings, InstanceFilter } from "../../runtime/agent-settings.ts";
import { maskSettings } from "../../runtime/agent-settings.ts";
import { fieldText, type AgentFormFields } from "./agent-form.ts";
import { fieldName, fieldsOfKind, FORM_ROWS } from "./form-rows.ts";
import { Badge } from "../shell/badges.tsx";
import { utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";
import { EffectiveSettings, type EffectiveSetting } from "./effective-settings.tsx";

export interface AgentSummary {
  id: string;
  name: string;
  archivedAt: number | null;
  approvals: number;
  attention: number;
  settings: AgentSettings;
}

export function filterSummary(filter: InstanceFilter | undefined): string {
  if (!filter) return "every instance of the provider account";
  if (filter.ids) return `${filter.ids.length} listed: ${filter.ids.slice(0, 5).join(", ")}${filter.ids.length > 5 ? ", …" : ""}`;
  return `labels starting with “${filter.labelPrefix}”`;
}

const dashboardOf = (id: string) => `/?agent=${encodeURIComponent(id)}`;

function AgentsTable({ agents }: { agents: AgentSummary[] }) {
  return (
    <div class="table-wrap" tabindex={0} role="region" aria-label="Agents">
      <table data-testid="agents">
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Status</th>
            <th scope="col">Approvals waiting</th>
            <th scope="col">Needs attention</th>
            <th scope="col">Instances</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr data-agent={a.id}>
              <td>
                <a href={`/agents/${encodeURIComponent(a.id)}`}>{a.name === a.id ? a.id : `${a.name} (${a.id})`}</a>
                {" · "}
                <a href={dashboardOf(a.id)}>
                  dashboard<span class="visually-hidden">{` of ${a.id}`}</span>
                </a>
              </td>
              <td>
                {a.archivedAt === null ? (
                  <Badge tone="ok">active</Badge>
                ) : (
                  <Badge tone="neutral">{`archived ${utcTime(a.archivedAt)}`}</Badge>
                )}
              </td>
              <td>{String(a.approvals)}</td>
              <td>{String(a.attention)}</td>
              <td>{filterSummary(a.settings.instanceFilter)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function TextField(props: { name: string; label: string; value: string; hint?: string; inputmode?: "numeric" | "decimal" }) {
  const id = `agent-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint ? (
        <p class="muted hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      <input
        type="text"
        id={id}
        name={props.name}
        value={props.value}
        inputmode={props.inputmode}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
      />
    </div>
  );
}

const labelOf = (input: "actions" | "instanceFilter") => FORM_ROWS.find((row) => row.agent.field.input === input)!.agent.field.label;
const approvalLegend = labelOf("actions");
const filterLegend = labelOf("instanceFilter");

/**
 * The settings form: create (with an id field) or edit, one field per per-agent row that declares
 * one (./form-rows.ts). Empty fields keep the environment's default.
 */
function AgentSettingsForm(props: { fields: AgentFormFields; csrf: string; action: string; create: boolean }) {
  const f = props.fields;
  return (
    <form method="post" action={props.action} class="panel agent-form">
      <CsrfField token={props.csrf} />
      {props.create ? <TextField name="id" label="Id (letters, digits, - or _)" value={f.id} /> : null}
      <TextField name="name" label="Name" value={f.name} />
      <p class="muted">Empty fields use the environment's defaults.</p>
      {fieldsOfKind("number", "text").map((row) => (
        <TextField
          name={fieldName(row)}
          label={row.agent.field.label}
          value={fieldText(f, fieldName(row))}
          hint={row.agent.field.hint}
          inputmode={row.agent.field.input === "number" && !row.agent.field.nullWord ? "decimal" : undefined}
        />
      ))}
      <fieldset class="field">
        <legend>{approvalLegend}</legend>
        <label for="agent-approvalMode">Rule</label>
        <select id="agent-approvalMode" name="approvalMode">
          <option value="default" selected={f.approvalMode === "default"}>
            The environment's default
          </option>
          <option value="custom" selected={f.approvalMode === "custom"}>
            Exactly the actions ticked below
          </option>
        </select>
        {APPROVABLE_ACTIONS.map((action) => (
          <label class="choice">
            <input type="checkbox" name="approvalRequired" value={action} checked={f.approvalRequired.includes(action)} /> {action}
          </label>
        ))}
      </fieldset>
      <fieldset class="field">
        <legend>Notification channels</legend>
        <p class="muted">Stored URLs are shown masked; leave a masked URL as it is to keep it, clear it to remove the channel.</p>
        {fieldsOfKind("url").map((row) => (
          <TextField name={fieldName(row)} label={row.agent.field.label} value={fieldText(f, fieldName(row))} />
        ))}
      </fieldset>
      <fieldset class="field">
        <legend>{filterLegend}</legend>
        <label for="agent-filterKind">Filter</label>
        <select id="agent-filterKind" name="filterKind">
          <option value="none" selected={f.filterKind === "none"}>
            Every instance of the account
          </option>
          <option value="labelPrefix" selected={f.filterKind === "labelPrefix"}>
            Labels starting with
          </option>
          <option value="ids" selected={f.filterKind === "ids"}>
            These instance ids
          </option>
        </select>
        <TextField name="filterValue" label="Label prefix, or ids separated by commas" value={f.filterValue} />
      </fieldset>
      <button type="submit">{props.create ? "Create agent" : "Save settings"}</button>
    </form>
  );
}

const ErrorLine = ({ error }: { error: string | null | undefined }) =>
  error ? (
    <p class="error" role="alert" data-testid="agent-form-error">
      {error}
    </p>
  ) : null;

export function AgentsPage(props: {
  agents: AgentSummary[];
  canChange: boolean;
  csrf: string;
  fields: AgentFormFields;
  error?: string | null;
  defaults: readonly EffectiveSetting[];
}) {
  return (
    <>
      <AgentsTable agents={props.agents} />
      <h2>Defaults from the environment</h2>
      <p class="muted">What an agent runs with where it sets nothing itself; each agent's page shows its own values in effect.</p>
      <EffectiveSettings rows={props.defaults} />
      {props.canChange ? (
        <section aria-labelledby="new-agent">
          <h2 id="new-agent">New agent</h2>
          <ErrorLine error={props.error} />
          <AgentSettingsForm fields={props.fields} csrf={props.csrf} action="/agents" create />
        </section>
      ) : (
        <p class="muted">Only admins can create, change or archive agents.</p>
      )}
    </>
  );
}

function SettingsFacts({ settings }: { settings: AgentSettings }) {
  const shown = maskSettings(settings);
  const entries = Object.entries(shown);
  return entries.length === 0 ? (
    <p>Every setting is the environment's default.</p>
  ) : (
    <pre data-testid="agent-settings">{JSON.stringify(shown, null, 2)}</pre>
  );
}

export function AgentPage(props: {
  agent: AgentSummary;
  canChange: boolean;
  csrf: string;
  fields: AgentFormFields;
  error?: string | null;
  effective: readonly EffectiveSetting[];
  webhookSecret?: string;
}) {
  const a = props.agent;
  const action = `/agents/${encodeURIComponent(a.id)}`;
  return (
    <>
      {props.webhookSecret ? (
        <section class="panel" role="status" aria-labelledby="new-webhook-secret">
          <h2 id="new-webhook-secret">Webhook secret</h2>
          <p>{`Agent created. Its instances sign their reports to /webhooks/${a.id}/instances with this webhook secret; it is shown only now, so store it (rotate it with POST /api/agents/${a.id}/webhook-secret).`}</p>
          <p>
            <code id="webhook-secret">{props.webhookSecret}</code>
          </p>
        </section>
      ) : null}
      <p>
        <a href="/agents">← All agents</a> · <a href={dashboardOf(a.id)}>{`Open ${a.id}'s dashboard`}</a>
      </p>
      <section class="panel" aria-labelledby="agent-facts">
        <h2 id="agent-facts">Settings</h2>
        <p>{a.archivedAt === null ? "Active." : `Archived at ${utcTime(a.archivedAt)}: no ticks or runs; its history is kept.`}</p>
        <p>{`Instances: ${filterSummary(a.settings.instanceFilter)}.`}</p>
        <h3>In effect</h3>
        <EffectiveSettings rows={props.effective} />
        <h3>Stored on the agent</h3>
        <SettingsFacts settings={a.settings} />
      </section>
      {props.canChange ? (
        <>
          <section aria-labelledby="edit-agent">
            <h2 id="edit-agent">Change settings</h2>
            <ErrorLine error={props.error} />
            <AgentSettingsForm fields={props.fields} csrf={props.csrf} action={action} create={false} />
          </section>
          {a.archivedAt === null ? (
            <section aria-labelledby="archive-agent">
              <h2 id="archive-agent">Archive</h2>
              <form method="post" action={`${action}/archive`} class="panel">
                <CsrfField token={props.csrf} />
                <p>
                  Archiving stops this agent's ticks and runs until it is restored; its history stays readable. The id stays taken. The last
                  active agent cannot be archived.
                </p>
                <label class="choice">
                  <input type="checkbox" name="confirm" value="yes" required /> {`Yes, archive ${a.id}`}
                </label>
                <button type="submit" class="danger">
                  Archive agent
                </button>
              </form>
            </section>
          ) : (
            <section aria-labelledby="restore-agent">
              <h2 id="restore-agent">Restore</h2>
              <form method="post" action={`${action}/restore`} class="panel">
                <CsrfField token={props.csrf} />
                <p>Restoring resumes this agent's ticks, runs and ingest, with its history as it was.</p>
                <button type="submit">Restore agent</button>
              </form>
            </section>
          )}
        </>
      ) : (
        <p class="muted">Only admins can change, archive or restore agents.</p>
      )}
    </>
  );
}
