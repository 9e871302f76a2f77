/**
 * What one setting is: a row of the settings table (runtime/settings/table.ts). Everything else
 * about settings is read from rows: the environment parser and the typed Config
 * (runtime/config.ts), the per-agent settings and `configForAgent` (runtime/agent-settings.ts),
 * the agents API's validation, the dashboard's Agents form and effective settings, and the
 * generated reference docs/configuration.md (runtime/settings/reference.ts). A new setting is a
 * row plus the code that reads it from Config.
 */
import type { z } from "zod";

/** Sections of the configuration reference, in the order it prints them. */
export const GROUPS = [
  "Database and hosting",
  "Access and security",
  "Scheduler",
  "LLM",
  "Agent runs",
  "Providers",
  "Simulator",
  "Instances and replacement",
  "Approvals",
  "Bounds",
  "Notifications",
  "Economics",
  "Watchdog",
  "Per agent only",
] as const;
export type Group = (typeof GROUPS)[number];

/** How the Agents form edits a per-agent setting (absent: API only, a form save keeps it). */
export interface FormField {
  label: string;
  /**
   * `number`: a number typed as text; `text`: trimmed text; `url`: a notification channel's URL
   * (shown masked); `actions`: a tick per approvable action; `instanceFilter`: label prefix or ids.
   */
  input: "number" | "text" | "url" | "actions" | "instanceFilter";
  /** The posted field's name, when it is not the per-agent key (channels: `slack`, …). */
  name?: string;
  hint?: string;
  /** A `number` whose per-agent value may be null: the word that stores null (empty stays "unset"). */
  nullWord?: string;
}

/** The per-agent side of a setting: its key in an agent's settings and how it folds over Config. */
export interface AgentSide<A extends z.ZodType = z.ZodType, C = unknown> {
  /** The key in an agent's settings object; `a.b` nests (`channels.slack` is `{ channels: { slack } }`). */
  key: string;
  /** The JSON value's schema (numbers are numbers here, not text); the row's `agentSchema` when absent. */
  schema?: A;
  /** The agent's value as it lands in Config; the row's `to` when absent. */
  to?: (value: z.output<A>) => C;
  /** false: not laid over Config by configForAgent (read from the settings where it is used). */
  fold?: false;
  field?: FormField;
  /** The value in effect, as the effective-settings view shows it (from its Config value). */
  show?: (value: C) => string;
  /**
   * A secret: how the API and the dashboard show it, and what to store when a value is sent back
   * (the stored secret again when what was sent is its mask, unchanged).
   */
  mask?: { show: (value: z.output<A>) => z.output<A>; keep: (sent: z.output<A>, stored: z.output<A>) => z.output<A> };
}

/**
 * One setting. `schema` parses the environment variable's text (with its default, or
 * `.optional()`); `at` is where its value lands in Config (a dotted path), after `to`.
 * A setting with no environment variable (`env: false`) exists per agent only.
 */
export interface SettingRow<S extends z.ZodType = z.ZodType, C = unknown, A extends z.ZodType = z.ZodType> {
  group: Group;
  doc: string;
  schema: S;
  to?: (value: z.output<S>) => C;
  at?: string;
  env?: false;
  secret?: boolean;
  /** The default as the reference shows it, when it is not the schema's own (host-dependent, generated). */
  defaultText?: string;
  /** The accepted values as the reference shows them (numeric helpers fill it in). */
  bounds?: string;
  /** The per-agent schema a numeric helper derives from the same bounds. */
  agentSchema?: A;
  agent?: AgentSide<A, C>;
}

declare const typed: unique symbol;

/** A row as the table holds it: the row, plus (for the type checker only) its literal types. */
export type TypedRow<S extends z.ZodType, P extends string, C, K extends string, V, N extends boolean> = SettingRow<
  z.ZodType,
  unknown,
  z.ZodType
> & {
  readonly [typed]?: { schema: S; at: P; value: C; agentKey: K; agentValue: V; envless: N };
};

/** The literal types a row carries: where it lands, its Config value, its per-agent key and value. */
export type RowTypes<R> = R extends { readonly [typed]?: infer T } ? NonNullable<T> : never;

type Pick2<X, A> = [X] extends [z.ZodType<never>] ? A : X;

/**
 * Declares a row, keeping its literal types (the `at` path and the value types build Config's
 * and AgentSettings' types). The identity at run time.
 */
export function setting<
  S extends z.ZodType,
  const P extends string = never,
  C = z.output<S>,
  A extends z.ZodType = z.ZodType<never>,
  const K extends string = never,
  X extends z.ZodType = z.ZodType<never>,
  const N extends false | undefined = undefined,
>(row: {
  group: Group;
  doc: string;
  schema: S;
  to?: (value: z.output<S>) => C;
  at?: P;
  env?: N;
  secret?: boolean;
  defaultText?: string;
  bounds?: string;
  agentSchema?: A;
  agent?: Omit<AgentSide<Pick2<X, A>, NoInfer<C>>, "key" | "schema"> & { key: K; schema?: X };
}): TypedRow<S, P, C, K, z.output<Pick2<X, A>>, N extends false ? true : false> {
  return row as never;
}
