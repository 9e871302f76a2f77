/**
 * The settings table's rows the Agents form edits, in table order: those with a dashboard field
 * (runtime/settings/setting.ts FormField). The form and the page read their fields from here.
 */
import { AGENT_ROWS, type AgentRow } from "../../runtime/settings/table.ts";
import type { FormField } from "../../runtime/settings/setting.ts";

export type FormRow = AgentRow & { agent: AgentRow["agent"] & { field: FormField } };

export const FORM_ROWS: readonly FormRow[] = AGENT_ROWS.filter((row): row is FormRow => row.agent.field !== undefined);

/** The posted field's name: the row's own, else its per-agent key. */
export const fieldName = (row: FormRow): string => row.agent.field.name ?? row.agent.key;

export const fieldsOfKind = (...inputs: FormField["input"][]): readonly FormRow[] =>
  FORM_ROWS.filter((row) => inputs.includes(row.agent.field.input));
