/**
 * The configuration reference (docs/configuration.md), rendered from the settings table: one
 * section per group, each setting once, with its environment variable, per-agent key, default,
 * accepted values and meaning. `npm run docs` writes it (docs/generate.ts); a test fails when the
 * committed file differs from what the table renders, so the reference cannot drift.
 */
import type { z } from "zod";
import { GROUPS } from "./setting.ts";
import { ROWS, type NamedRow } from "./table.ts";

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const code = (text: string) => `\`${text}\``;

/** The schema under its `.optional()` and `.default()`. */
function inner(schema: z.ZodType): z.ZodType {
  let at = schema as unknown as { def: { type: string; innerType?: z.ZodType; entries?: Record<string, string> } };
  while ((at.def.type === "optional" || at.def.type === "default") && at.def.innerType) at = at.def.innerType as never;
  return at as unknown as z.ZodType;
}

function defaultOf(row: NamedRow): string {
  if (row.defaultText) return row.defaultText;
  const parsed = row.schema.safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return "–";
  return code(String(parsed.data));
}

function boundsOf(row: NamedRow): string {
  if (row.bounds) return row.bounds;
  const def = (inner(row.schema) as unknown as { def: { type: string; entries?: Record<string, string> } }).def;
  if (def.type === "enum" && def.entries) return Object.values(def.entries).map(code).join(", ");
  if (/URL$/.test(row.name)) return "`http(s)://` URL";
  if (row.secret) return "no spaces or line breaks";
  return "text";
}

function rowLine(row: NamedRow): string {
  const variable = row.env === false ? "–" : code(row.name);
  const agent = row.agent ? code(row.agent.key) : "–";
  const doc = row.secret ? `${row.doc}. Secret` : row.doc;
  return `| ${[variable, agent, defaultOf(row), boundsOf(row), doc].map(cell).join(" | ")} |`;
}

export function renderConfigurationReference(): string {
  const lines = [
    "<!-- Generated from runtime/settings/ by `npm run docs`; edit the rows there, not this file. -->",
    "# Configuration reference",
    "",
    "Every setting of fleetwarden, once. Environment variables are the same on both hosts (Node and",
    "Workers); an empty variable counts as unset, and a bad one stops start-up with one line naming it.",
    "A setting with a per-agent key can also be set for one agent (`settings` of `POST/PATCH",
    "/api/agents`, or the Agents page when it has a field there); an agent's own value wins over the",
    "environment's. Numbers are whole unless fractions are allowed; times ending in `_S` are seconds,",
    "`_MS` milliseconds.",
  ];
  for (const group of GROUPS) {
    const rows = ROWS.filter((row) => row.group === group);
    if (rows.length === 0) continue;
    lines.push(
      "",
      `## ${group}`,
      "",
      "| variable | per agent | default | accepts | meaning |",
      "|---|---|---|---|---|",
      ...rows.map(rowLine),
    );
  }
  return `${lines.join("\n")}\n`;
}
