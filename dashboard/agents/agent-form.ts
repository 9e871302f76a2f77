/**
 * The agents page's settings form, both ways: what a form post's fields mean as an agents-API
 * body (validated by the API's own schemas, jobs/agent-admin-requests.ts, so the form and the API
 * accept and refuse the same things), and what the form shows for stored settings. The fields are
 * the per-agent rows of the settings table that declare one (runtime/settings/); a row without a
 * field is set through the API only, and a form save keeps it as stored. Empty fields mean
 * "unset: the environment's default". Secrets are shown masked; a mask posted back unchanged keeps
 * the stored value (runtime/agent-settings.ts keepMaskedSecrets).
 */
import type { z } from "zod";
import { createAgentBody, replaceAgentBody } from "../../jobs/agent-admin-requests.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { getPath, setPath } from "../../runtime/settings/table.ts";
import { keepMaskedSecrets, maskSettings, type AgentSettings } from "../../runtime/agent-settings.ts";
import { FORM_ROWS, fieldName, fieldsOfKind } from "./form-rows.ts";

/**
 * The form's fields as posted or as shown: one text per `number`, `text` and `url` row (named by
 * fieldName), the approval rule with its ticked actions, and the instance filter's kind and value.
 */
export interface AgentFormFields {
  id: string;
  name: string;
  approvalMode: "default" | "custom";
  approvalRequired: string[];
  filterKind: "none" | "labelPrefix" | "ids";
  filterValue: string;
  [field: string]: string | string[];
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
/** A text field's value ("" when the fields came without it). */
export const fieldText = (f: AgentFormFields, name: string): string => {
  const value = f[name];
  return typeof value === "string" ? value : "";
};

/** Reads a posted form (parsed with `all: true`) into its fields. */
export function readAgentForm(posted: Posted): AgentFormFields {
  const filterKind = text(posted, "filterKind");
  const typed = Object.fromEntries(fieldsOfKind("number", "text", "url").map((row) => [fieldName(row), text(posted, fieldName(row))]));
  return {
    ...typed,
    id: text(posted, "id"),
    name: text(posted, "name"),
    approvalMode: text(posted, "approvalMode") === "custom" ? "custom" : "default",
    approvalRequired: list(posted, "approvalRequired"),
    filterKind: filterKind === "labelPrefix" || filterKind === "ids" ? filterKind : "none",
    filterValue: text(posted, "filterValue"),
  };
}

/** The top-level settings this form edits: every other stored setting is kept by a save. */
const FORM_SETTINGS = [...new Set(FORM_ROWS.map((row) => row.agent.key.split(".")[0]!))];

/**
 * A number as typed becomes a number, the row's null word null; anything else stays text, for the
 * schema to refuse by name.
 */
const numberOrText = (value: string, nullWord: string | undefined): number | string | null =>
  value === nullWord ? null : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;

/** The settings object the fields describe, before validation (unset fields left out). */
function settingsOf(f: AgentFormFields): Record<string, unknown> {
  let settings: Record<string, unknown> = {};
  for (const row of FORM_ROWS) {
    const key = row.agent.key;
    const value = fieldText(f, fieldName(row));
    switch (row.agent.field!.input) {
      case "number":
        if (value) settings = setPath(settings, key, numberOrText(value, row.agent.field.nullWord));
        break;
      case "text":
      case "url":
        if (value) settings = setPath(settings, key, value);
        break;
      case "actions":
        if (f.approvalMode === "custom") settings = setPath(settings, key, f.approvalRequired);
        break;
      case "instanceFilter":
        if (f.filterKind === "labelPrefix") settings = setPath(settings, key, { labelPrefix: f.filterValue });
        if (f.filterKind === "ids") settings = setPath(settings, key, { ids: f.filterValue.split(/[\s,]+/).filter(Boolean) });
        break;
    }
  }
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
 * with secrets posted back as their masks kept as stored.
 */
export function agentChangeFromForm(
  f: AgentFormFields,
  stored: AgentSettings,
): FormResult<{ name?: string | undefined; settings: AgentSettings }> {
  const result = checked(replaceAgentBody, { ...(f.name ? { name: f.name } : {}), settings: settingsOf(f) });
  if (!result.ok) return result;
  // Settings the form has no field for are set through the API only: a form save keeps them as stored.
  const apiOnly = Object.fromEntries(Object.entries(stored).filter(([key]) => !FORM_SETTINGS.includes(key)));
  return {
    ok: true,
    value: { name: result.value.name, settings: { ...keepMaskedSecrets(result.value.settings ?? {}, stored), ...apiOnly } },
  };
}

/** The fields that show an agent's stored settings (secrets masked). */
export function agentFormFields(agent: { id: string; name: string | null; settings: AgentSettings }): AgentFormFields {
  const s = maskSettings(agent.settings);
  const filter = s.instanceFilter;
  const typed = Object.fromEntries(
    fieldsOfKind("number", "text", "url").map((row) => {
      const value = getPath(s, row.agent.key);
      const shown = value === null ? (row.agent.field.nullWord ?? "") : value === undefined ? "" : String(value);
      return [fieldName(row), shown];
    }),
  );
  return {
    ...typed,
    id: agent.id,
    name: agent.name ?? "",
    approvalMode: s.approvalRequired ? "custom" : "default",
    approvalRequired: s.approvalRequired ?? [],
    filterKind: filter?.ids ? "ids" : filter?.labelPrefix !== undefined ? "labelPrefix" : "none",
    filterValue: filter?.ids ? filter.ids.join(", ") : (filter?.labelPrefix ?? ""),
  };
}

export const EMPTY_AGENT_FORM: AgentFormFields = agentFormFields({ id: "", name: null, settings: {} });
