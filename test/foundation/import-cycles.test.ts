/**
 * No import cycle between product files, static, type-only or dynamic: a cycle means two modules each need
 * the other to be understood (and a dynamic `import()` only hides one from the bundler). Read from
 * the code with the layering test's import reader, so both agree on what an import is.
 */
import { describe, expect, it } from "vitest";
import { PRODUCT_FILES, relativeTargets } from "../support/source-imports.ts";

const PRODUCT = new Set(PRODUCT_FILES);

/** The product files a file imports; `import type` counts too: a type cycle still ties two modules together. */
const targets = (file: string) => relativeTargets(file).filter((target) => PRODUCT.has(target));

/** Every cycle's files, each cycle once (Tarjan's strongly connected components of size > 1). */
function importCycles(files: string[], edges: (file: string) => string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of edges(file)) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || edges(file).includes(file)) cycles.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}

describe("import cycles", () => {
  it("the cycle finder finds a cycle and passes a chain", () => {
    const graph: Record<string, string[]> = { a: ["b"], b: ["c"], c: ["a"], d: ["a"] };
    expect(importCycles(Object.keys(graph), (f) => graph[f] ?? [])).toEqual([["a", "b", "c"]]);
    expect(importCycles(["a", "b"], (f) => (f === "a" ? ["b"] : []))).toEqual([]);
  });

  it("no product file imports itself back through others", () => {
    expect(importCycles(PRODUCT_FILES, targets)).toEqual([]);
  });
});
