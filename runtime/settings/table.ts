/**
 * The settings table: every setting of fleetwarden, one row each, keyed by its environment
 * variable (a per-agent-only setting by its per-agent key). Row order is the reference's order
 * within each group, and the Agents form's and effective-settings view's order.
 */
import type { z } from "zod";
import { ACCESS_ROWS } from "./rows-access.ts";
import { ECONOMICS_ROWS } from "./rows-economics.ts";
import { FLEET_ROWS } from "./rows-fleet.ts";
import { GUARD_ROWS } from "./rows-guards.ts";
import { HOSTING_ROWS } from "./rows-hosting.ts";
import { LLM_ROWS } from "./rows-llm.ts";
import type { AgentSide, RowTypes, SettingRow } from "./setting.ts";

export const SETTINGS = { ...HOSTING_ROWS, ...ACCESS_ROWS, ...LLM_ROWS, ...FLEET_ROWS, ...GUARD_ROWS, ...ECONOMICS_ROWS };

type Table = typeof SETTINGS;

/** A row with its name: the environment variable, or the per-agent key of a per-agent-only setting. */
export type NamedRow = SettingRow & { name: string };
export const ROWS: readonly NamedRow[] = Object.entries(SETTINGS).map(([name, row]) => ({ ...(row as SettingRow), name }));

/** Rows read from the environment. */
export const ENV_ROWS = ROWS.filter((row) => row.env !== false);

/** A per-agent setting: its row, its key, and its schema (the row's own when the numeric helper made one). */
export type AgentRow = NamedRow & { agent: AgentSide & { schema: z.ZodType } };
export const AGENT_ROWS: readonly AgentRow[] = ROWS.filter((row) => row.agent).map((row) => ({
  ...row,
  agent: { ...row.agent!, schema: (row.agent!.schema ?? row.agentSchema)! },
}));

// ---- Types built from the rows (for the type checker only) ----

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** Intersections of nested objects written out as one object type (readable in errors and hovers). */
export type Flatten<T> = T extends
  | readonly unknown[]
  | string
  | number
  | boolean
  | bigint
  | symbol
  | null
  | undefined
  | ((...args: never[]) => unknown)
  ? T
  : { [K in keyof T]: Flatten<T[K]> };
type Nest<P extends string, V> = P extends `${infer H}.${infer T}` ? { [K in H]: Nest<T, V> } : { [K in P]: V };
type NestOptional<P extends string, V> = P extends `${infer H}.${infer T}` ? { [K in H]?: NestOptional<T, V> } : { [K in P]?: V };

type Landings = {
  [K in keyof Table]: RowTypes<Table[K]> extends { at: infer P extends string; value: infer C }
    ? [P] extends [never]
      ? never
      : Nest<P, C>
    : never;
}[keyof Table];
/** Config as the rows alone build it (runtime/config.ts adds what is derived from several). */
export type RowConfig = Flatten<UnionToIntersection<Landings>>;

type AgentKeys = {
  [K in keyof Table]: RowTypes<Table[K]> extends { agentKey: infer P extends string; agentValue: infer V }
    ? [P] extends [never]
      ? never
      : NestOptional<P, V>
    : never;
}[keyof Table];
/** An agent's settings object: every per-agent key optional. */
export type RowAgentSettings = Flatten<UnionToIntersection<AgentKeys>>;

type EnvNames = { [K in keyof Table]: RowTypes<Table[K]> extends { envless: true } ? never : K }[keyof Table];
/** The environment schema's shape: each variable's schema, typed. */
export type EnvShape = { [K in EnvNames]: RowTypes<Table[K]>["schema"] };

// ---- Reading and writing a dotted path ----

/** The value at `a.b.c` of an object; undefined when a step is missing or null. */
export function getPath(object: unknown, path: string): unknown {
  let at = object;
  for (const step of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}

/**
 * A copy of `object` with `value` at `a.b.c` (objects on the way copied, missing ones created).
 * Under a step that is null nothing is written: a model setting leaves a Config without an LLM alone.
 */
export function setPath<T>(object: T, path: string, value: unknown): T {
  const [step, ...rest] = path.split(".") as [string, ...string[]];
  const record = (object ?? {}) as Record<string, unknown>;
  if (rest.length === 0) return { ...record, [step]: value } as T;
  const inner = record[step];
  if (inner === null) return object;
  return { ...record, [step]: setPath(inner ?? {}, rest.join("."), value) } as T;
}
