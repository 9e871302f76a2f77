/**
 * The generated documents: each output path with the function that renders it from the code's
 * own tables. `npm run docs` writes them; test/docs/generated-docs.test.ts fails when a committed
 * file differs from what its table renders.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderConfigurationReference } from "../runtime/settings/reference.ts";

export const GENERATED: readonly (readonly [outputPath: string, render: () => string])[] = [
  ["docs/configuration.md", renderConfigurationReference],
];

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [outputPath, render] of GENERATED) {
    writeFileSync(fileURLToPath(new URL(`../${outputPath}`, import.meta.url)), render());
    console.log(`wrote ${outputPath}`);
  }
}
