/**
 * The README is the front door and docs/ the reference: the README stays short and opens with the
 * two commands that work on a fresh machine, every HTTP route the app serves (outside the
 * dashboard) is documented in docs/api.md, and every relative link between the pages leads to a
 * page and heading that exist. A route added without its documentation, or a heading renamed
 * under a link, fails here.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";

const ROOT = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
/** Pages generated from the code by docs/generate.ts; a link to one is valid once it is generated. */
const GENERATED = new Set(["docs/configuration.md", "docs/actions.md", "docs/api-reference.md"]);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const headings = withoutCode(markdown).match(/^#+ .*$/gm) ?? [];
  return new Set(
    headings.map((h) =>
      h
        .replace(/^#+ /, "")
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replace(/ /g, "-"),
    ),
  );
}

function withoutCode(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
}

describe("README", () => {
  it("is at most 400 lines and opens with npm start and npm test", () => {
    const lines = read("README.md").split("\n");
    expect(lines.length).toBeLessThanOrEqual(400);
    const opening = lines.slice(0, 8).join("\n");
    expect(opening).toMatch(/npm start\s+#.*http:\/\/localhost:8787/);
    expect(opening).toMatch(/npm test\s+#.*every test/);
  });
});

describe("docs/api.md", () => {
  it("documents every route outside the dashboard", () => {
    const app = buildApp(() => {
      throw new Error("no request is made");
    });
    const api = read("docs/api.md");
    const routes = new Set(
      app.routes
        .filter((r) => r.method !== "ALL" && /^\/(api|webhooks|internal|integrations|healthz|openapi)\b/.test(r.path))
        .map((r) => `${r.method} ${r.path}`),
    );
    expect(routes.size).toBeGreaterThan(40);
    const undocumented = [...routes].filter((route) => !new RegExp(`\`${route.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[\`? ]`).test(api));
    expect(undocumented).toEqual([]);
  });
});

describe("links between the pages", () => {
  it("lead to pages and headings that exist", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const [, target] of withoutCode(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split("#");
        const path = file ? normalize(join(dirname(page), file)) : page;
        if (!existsSync(join(ROOT, path))) {
          if (!GENERATED.has(path)) broken.push(`${page}: ${target}`);
          continue;
        }
        if (anchor && path.endsWith(".md") && !anchorsOf(read(path)).has(anchor)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
