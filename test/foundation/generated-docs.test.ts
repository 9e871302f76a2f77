/**
 * Generated documents stay what their tables render: docs/actions.md is the action decision table
 * (fleet/actions/decide.ts) and docs/configuration.md the settings table (runtime/settings/), printed;
 * a gate or a row added, changed or removed without `npm run docs`, or a hand edit, fails here. The
 * embedded reporter (jobs/reporter/reporter-script.ts) is reporter/reporter.sh, the same way, and
 * docs/api-reference.md the OpenAPI document GET /openapi.json serves (jobs/openapi/).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GENERATED } from "../../docs/generate.ts";
import { ENV_ROWS } from "../../runtime/settings/table.ts";

const root = path.resolve(import.meta.dirname, "../..");

describe("generated docs", () => {
  it("include the action table and the configuration reference", () => {
    expect(GENERATED.map(([outputPath]) => outputPath)).toEqual([
      "docs/actions.md",
      "docs/configuration.md",
      "jobs/reporter/reporter-script.ts",
      "docs/api-reference.md",
    ]);
  });

  it.each(GENERATED.map(([outputPath, render]) => [outputPath, render] as const))(
    "%s is what its table renders (run npm run docs)",
    (outputPath, render) => {
      expect(readFileSync(path.join(root, outputPath), "utf8")).toBe(render());
    },
  );

  it("lists every environment variable exactly once in docs/configuration.md", () => {
    const text = readFileSync(path.join(root, "docs/configuration.md"), "utf8");
    for (const row of ENV_ROWS) expect(text.split(`\n| \`${row.name}\` |`).length - 1, row.name).toBe(1);
  });
});
