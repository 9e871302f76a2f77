/**
 * The generated reference pages are what their renderers produce (docs/generate.ts): a change to
 * the action table, or a hand edit of docs/actions.md, fails here until `npm run docs` is run.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PAGES } from "../../docs/generate.ts";

const root = path.resolve(import.meta.dirname, "../..");

describe("generated docs", () => {
  it("include docs/actions.md", () => {
    expect(PAGES.map(([page]) => page)).toContain("docs/actions.md");
  });
  for (const [page, render] of PAGES) {
    it(`${page} is what npm run docs writes`, () => {
      expect(readFileSync(path.join(root, page), "utf8")).toBe(render());
    });
  }
});
