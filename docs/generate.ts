/**
 * `npm run docs`: writes the reference pages rendered from the code's own tables, so they cannot
 * drift from it. One `[path, render]` pair per page; test/foundation/generated-docs.test.ts fails
 * when a committed page is not what its renderer produces.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderGateTable } from "../fleet/actions/decide.ts";
import { renderConfigurationReference } from "../runtime/settings/reference.ts";

export const GENERATED: readonly (readonly [outputPath: string, render: () => string])[] = [
  ["docs/actions.md", renderGateTable],
  ["docs/configuration.md", renderConfigurationReference],
];

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [outputPath, render] of GENERATED) {
    writeFileSync(fileURLToPath(new URL(`../${outputPath}`, import.meta.url)), render());
    console.log(`wrote ${outputPath}`);
  }
}
