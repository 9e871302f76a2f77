/**
 * The product's source files and their imports, read from the code as text: what the layering
 * and import-cycle tests check. One reader, so both agree on what an import is (static, type-only,
 * re-exports, dynamic `import()`).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "../..");

/** The product's folders, highest layer first, with their rank: higher imports lower. */
export const RANK: Record<string, number> = {
  functions: 10,
  dashboard: 9,
  jobs: 8,
  agent: 7,
  fleet: 6,
  notify: 5,
  auth: 5,
  pipeline: 4,
  db: 3,
  schema: 2,
  runtime: 1,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) return name === "migrations" ? [] : sourceFiles(rel);
    return /\.(ts|tsx|mjs)$/.test(name) ? [rel] : [];
  });
}

/** Every product source file, relative to the repository root. */
export const PRODUCT_FILES: string[] = Object.keys(RANK).flatMap(sourceFiles);

const IMPORT = /(?:^|[^\w.])(?:import|export)\s*(?:type\s+)?(?:[^"'()]*?\sfrom\s*)?\(?\s*["']([^"']+)["']/gm;

/** The module specifiers a file imports, in every form. */
export function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), "utf8");
  return [...text.matchAll(IMPORT)].map((m) => m[1]!);
}

/** The files a file imports by relative path, as repository paths. */
export function relativeTargets(file: string): string[] {
  return importsOf(file)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
}
