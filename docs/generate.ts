/**
 * `npm run docs`: writes the reference pages that are rendered from the code, so they cannot drift
 * from it. One `[path, render]` pair per page; test/docs/generated-docs.test.ts fails when a
 * committed page is not what its renderer produces.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { renderGateTable } from "../fleet/actions/decide.ts";

export const PAGES: readonly (readonly [string, () => string])[] = [
  ["docs/actions.md", renderGateTable],
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(import.meta.dirname, "..");
  for (const [page, render] of PAGES) {
    writeFileSync(path.join(root, page), render());
    console.log(`wrote ${page}`);
  }
}
