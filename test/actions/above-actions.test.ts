/**
 * Replacement sits above the action table (issue #32): fleet/replacement/ acts through
 * executeAction, and nothing in fleet/actions/ imports fleet/replacement/, statically, as a type
 * or dynamically (the cycle used to be broken only by a dynamic `import()` in beginReplacement).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const IMPORT = /(?:^|[^\w.])(?:import|export)\s*(?:type\s+)?(?:[^"'()]*?\sfrom\s*)?\(?\s*["']([^"']+)["']/gm;

function targets(dir: string): { file: string; target: string }[] {
  return readdirSync(path.join(root, dir))
    .filter((name) => name.endsWith(".ts"))
    .flatMap((name) => {
      const file = `${dir}/${name}`;
      const text = readFileSync(path.join(root, file), "utf8");
      return [...text.matchAll(IMPORT)].map((m) => ({ file, target: path.posix.normalize(path.posix.join(dir, m[1]!)) }));
    });
}

describe("replacement above actions", () => {
  it("no file in fleet/actions imports fleet/replacement", () => {
    const actions = targets("fleet/actions");
    expect(actions.length).toBeGreaterThan(20);
    expect(actions.filter((t) => t.target.startsWith("fleet/replacement/")).map((t) => `${t.file} -> ${t.target}`)).toEqual([]);
  });

  it("fleet/replacement acts through the action table", () => {
    expect(targets("fleet/replacement").some((t) => t.target === "fleet/actions/actions.ts")).toBe(true);
  });
});
