/**
 * The catalogue of attacks (issue #33 item 6): every attack test in this folder says in its
 * header the attack and the guard, and is listed in README.md's table; every row there names a
 * file that exists. An attack test added without a row, or a row whose test was deleted, fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const here = import.meta.dirname;
const attackFiles = readdirSync(here)
  .filter((f) => f.endsWith(".test.ts") && f !== "catalogue.test.ts")
  .sort();
const rows = [...readFileSync(join(here, "README.md"), "utf8").matchAll(/^\| `([^`]+\.test\.ts)` \|/gm)].map((m) => m[1]!).sort();

describe("the attack catalogue", () => {
  it("lists at least the attacks of issue #33 item 6", () => {
    expect(attackFiles.length).toBeGreaterThanOrEqual(8);
  });

  it("README.md's table and the folder name the same tests", () => {
    expect(rows).toEqual(attackFiles);
  });

  it.each(attackFiles)("%s says the attack and the guard in its header", (file) => {
    const header = readFileSync(join(here, file), "utf8").match(/^\/\*\*[\s\S]*?\*\//)?.[0] ?? "";
    expect(header).toMatch(/^ \* Attack: /m);
    expect(header).toMatch(/^ \* Guard: /m);
  });
});
