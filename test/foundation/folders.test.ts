/**
 * The folders' shape, read from the code: dashboard pages hold no SQL (their reads are the read
 * models in jobs/read-models/, shared with the API), no product folder grows past 30 files directly
 * in it (a larger one is split by sub-domain), and pipeline/index.ts exports only what code
 * outside pipeline/ uses, so the pipeline's face says what the rest of the code depends on.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const PRODUCT = ["functions", "agent", "auth", "dashboard", "db", "fleet", "jobs", "notify", "pipeline", "runtime", "schema"];
const MAX_FILES_IN_FOLDER = 30;

function walk(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (name === "node_modules") return [];
    if (statSync(path.join(root, rel)).isDirectory()) return walk(rel);
    return /\.(ts|tsx|mts|mjs)$/.test(name) ? [rel] : [];
  });
}

/** Every folder under `dir` (itself included), with the number of files directly in it. */
function folderSizes(dir: string): [string, number][] {
  const entries = readdirSync(path.join(root, dir), { withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).length;
  return [[dir, files], ...entries.filter((e) => e.isDirectory()).flatMap((e) => folderSizes(`${dir}/${e.name}`))];
}

const SPECIFIER = /(?:^|[^\w.])(?:import|export)\s*(?:type\s+)?(?:[^"'()]*?\sfrom\s*)?\(?\s*["']([^"']+)["']/gm;
const specifiers = (file: string) => [...readFileSync(path.join(root, file), "utf8").matchAll(SPECIFIER)].map((m) => m[1]!);
const resolve = (file: string, spec: string) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));

/** The names a file takes from pipeline/index.ts: `import { a, type B, c as d } from …` and `const { e } = await import(…)`. */
function namesFromPipeline(file: string): string[] {
  const text = readFileSync(path.join(root, file), "utf8");
  const forms = [
    /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g,
    /export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g,
    /\{([^}]*)\}\s*=\s*await\s+import\(\s*["']([^"']+)["']\s*\)/g,
  ];
  return forms.flatMap((form) =>
    [...text.matchAll(form)]
      .filter((m) => resolve(file, m[2]!) === "pipeline/index.ts")
      .flatMap((m) => m[1]!.split(","))
      .map((part) =>
        part
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+|\s*:\s*/)[0]!
          .trim(),
      )
      .filter(Boolean),
  );
}

/** The names pipeline/index.ts exports, from its `export { … } from` and `export type { … } from` lines. */
function pipelineFace(): { names: string[]; wildcard: boolean } {
  const text = readFileSync(path.join(root, "pipeline/index.ts"), "utf8");
  const names = [...text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s*from/g)].flatMap((m) =>
    m[1]!
      .split(",")
      .map((part) =>
        part
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)
          .pop()!
          .trim(),
      )
      .filter(Boolean),
  );
  return { names, wildcard: /export\s+\*/.test(text) };
}

describe("folders", () => {
  it("no dashboard file reads the database itself: no drizzle-orm, no schema/ (reads live in jobs/read-models/)", () => {
    const sql = walk("dashboard").flatMap((file) =>
      specifiers(file)
        .filter((spec) => spec.startsWith("drizzle-orm") || (spec.startsWith(".") && resolve(file, spec).startsWith("schema/")))
        .map((spec) => `${file} -> ${spec}`),
    );
    expect(walk("dashboard").length).toBeGreaterThan(40);
    expect(sql).toEqual([]);
  });

  it(`no product folder holds more than ${MAX_FILES_IN_FOLDER} files directly`, () => {
    const sizes = PRODUCT.flatMap(folderSizes);
    expect(sizes.find(([dir]) => dir === "jobs")?.[1]).toBeGreaterThan(0);
    expect(sizes.filter(([, files]) => files > MAX_FILES_IN_FOLDER)).toEqual([]);
  });

  it("pipeline/index.ts names what it exports, each used outside pipeline/", () => {
    const face = pipelineFace();
    expect(face.wildcard).toBe(false);
    expect(face.names.length).toBeGreaterThan(50);
    const outside = [...PRODUCT.filter((dir) => dir !== "pipeline"), "test", "bench", "eval"].flatMap(walk);
    const used = new Set(outside.flatMap(namesFromPipeline));
    expect(used.has("claimRun")).toBe(true);
    expect(face.names.filter((name) => !used.has(name))).toEqual([]);
  });
});
