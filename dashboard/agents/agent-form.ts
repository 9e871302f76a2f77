/**
 * The agents page's settings form, both ways: what a form post's fields mean as an agents-API
 * body (validated by the API's own schemas, jobs/agent-admin-requests.ts, so the
 * form and the API accept and refuse the same things), and what the form shows for stored
 * settings. Empty fields mean "unset: the environment's default". Channel URLs are shown masked;
 * a mask posted back unchanged keeps the stored URL (runtime/agent-settings.ts keepMaskedSecrets).
 */
import type { z } from "zod";
import { createAgentBody, patchAgentBody } from "../../jobs/agent-admin-requests.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { keepMaskedSecrets, maskSettings, type AgentSettings } from "../../runtime/agent-settings.ts";

export const CHANNELS = ["slack", "discord", "ntfy"] as const;
export const NUMBER_FIELDS = ["contextBudgetTokens", "debounceHumanMs", "debounceStateMs", "maxPendingWakes"] as const;

/** The form's fields as posted or as shown (strings; `approvalRequired` a list of action names). */
export interface AgentFormFields {
  id: string;
  name: string;
  model: string;
  contextBudgetTokens: string;
  debounceHumanMs: string;
  debounceStateMs: string;
  maxPendingWakes: string;
  approvalMode: "default" | "custom";
  approvalRequired: string[];
  slack: string;
  discord: string;
  ntfy: string;
  filterKind: "none" | "labelPrefix" | "ids";
  filterValue: string;
}

type Posted = Record<string, string | File | (string | File)[]>;

const text = (posted: Posted, name: string): string => {
  const value = posted[name];
  return typeof value === "string" ? value.trim() : "";
};
const list = (posted: Posted, name: string): string[] => {
  const value = posted[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === "string");
};

/** Reads a posted form (parsed with `all: true`) into its fields. */
export function readAgentForm(posted: Posted): AgentFormFields {
  const filterKind = text(posted, "filterKind");
  return {
    id: text(posted, "id"),
    name: text(posted, "name"),
    model: text(posted, "model"),
    contextBudgetTokens: text(posted, "contextBudgetTokens"),
    debounceHumanMs: text(posted, "debounceHumanMs"),
    debounceStateMs: text(posted, "debounceStateMs"),
    maxPendingWakes: text(posted, "maxPendingWakes"),
    approvalMode: text(posted, "approvalMode") === "custom" ? "custom" : "default",
    approvalRequired: list(posted, "approvalRequired"),
    slack: text(posted, "slack"),
    discord: text(posted, "discord"),
    ntfy: text(posted, "ntfy"),
    filterKind: filterKind === "labelPrefix" || filterKind === "ids" ? filterKind : "none",
    filterValue: text(posted, "filterValue"),
  };
}

/** The settings this form edits: every other stored setting is kept by a save. */
const FORM_SETTINGS = ["model", ...NUMBER_FIELDS, "approvalRequired", "channels", "instanceFilter"] as const;

/** A whole number as typed becomes a number; anything else stays text, for the schema to refuse by name. */
const numberOrText = (value: string): number | string => (/^-?\d+$/.test(value) ? Number(value) : value);

/** The settings object the fields describe, before validation (unset fields left out). */
function settingsOf(f: AgentFormFields): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  if (f.model) settings.model = f.model;
  for (const name of NUMBER_FIELDS) if (f[name]) settings[name] = numberOrText(f[name]);
  if (f.approvalMode === "custom") settings.approvalRequired = f.approvalRequired;
  const channels = Object.fromEntries(CHANNELS.filter((name) => f[name]).map((name) => [name, f[name]]));
  if (Object.keys(channels).length > 0) settings.channels = channels;
  if (f.filterKind === "labelPrefix") settings.instanceFilter = { labelPrefix: f.filterValue };
  if (f.filterKind === "ids") settings.instanceFilter = { ids: f.filterValue.split(/[\s,]+/).filter(Boolean) };
  return settings;
}

export type FormResult<T> = { ok: true; value: T } | { ok: false; error: string };

function checked<T extends z.ZodType>(schema: T, body: unknown): FormResult<z.infer<T>> {
  const parsed = schema.safeParse(body);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: describeIssues(parsed.error.issues) };
}

/** A new agent, as POST /api/agents would take it. */
export function newAgentFromForm(f: AgentFormFields): FormResult<z.infer<typeof createAgentBody>> {
  return checked(createAgentBody, { id: f.id, ...(f.name ? { name: f.name } : {}), settings: settingsOf(f) });
}

/**
 * A settings change, as PATCH /api/agents/:agent would take it: the name and the whole settings,
 * with channel URLs posted back as their masks kept as stored.
 */
export function agentChangeFromForm(f: AgentFormFields, stored: AgentSettings): FormResult<{ name?: string | undefined; settings: AgentSettings }> {
  const result = checked(patchAgentBody, { ...(f.name ? { name: f.name } : {}), settings: settingsOf(f) });
  if (!result.ok) return result;
  // Settings the form has no field for are set through the API only (the Discord thread name, the
  // mode the overview's pause button sets, the provider account and its key, the idle-stop and
  // replacement delays, the spend limit): a form save keeps them as stored.
  const apiOnly = Object.fromEntries(Object.entries(stored).filter(([key]) => !(FORM_SETTINGS as readonly string[]).includes(key)));
  return { ok: true, value: { name: result.value.name, settings: { ...keepMaskedSecrets(result.value.settings ?? {}, stored), ...apiOnly } } };
}

/** The fields that show an agent's stored settings (channel URLs masked). */
export function agentFormFields(agent: { id: string; name: string | null; settings: AgentSettings }): AgentFormFields {
  const s = maskSettings(agent.settings);
  const filter = s.instanceFilter;
  const number = (n: number | undefined) => (n === undefined ? "" : String(n));
  return {
    id: agent.id,
    name: agent.name ?? "",
    model: s.model ?? "",
    contextBudgetTokens: number(s.contextBudgetTokens),
    debounceHumanMs: number(s.debounceHumanMs),
    debounceStateMs: number(s.debounceStateMs),
    maxPendingWakes: number(s.maxPendingWakes),
    approvalMode: s.approvalRequired ? "custom" : "default",
    approvalRequired: s.approvalRequired ?? [],
    slack: s.channels?.slack ?? "",
    discord: s.channels?.discord ?? "",
    ntfy: s.channels?.ntfy ?? "",
    filterKind: filter?.ids ? "ids" : filter?.labelPrefix !== undefined ? "labelPrefix" : "none",
    filterValue: filter?.ids ? filter.ids.join(", ") : (filter?.labelPrefix ?? ""),
  };
}

export const EMPTY_AGENT_FORM: AgentFormFields = agentFormFields({ id: "", name: null, settings: {} });
