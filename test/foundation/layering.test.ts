/**
 * The layering, read from the code: data flows one way, functions → dashboard → jobs → agent →
 * fleet → notify | auth → pipeline → db → schema → runtime, and a lower folder never imports a
 * higher one (docs/architecture.md draws the same order). Outside pipeline/ the pipeline is
 * reached through its one entry point, and only the hosts' own modules use Node's APIs.
 */
import path from "node:path";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importsOf, PRODUCT_FILES as files, RANK, relativeTargets, root } from "../support/source-imports.ts";

/** Imports against the order that are natural where they stand, each with its reason. */
const ALLOWED: Record<string, string> = {};

/** The only modules that may import Node's own APIs (`node:*`): the Node host and its database client. */
const NODE_ONLY = [
  /^functions\/host\//,
  /^functions\/node\.ts$/,
  /^functions\/operator\.ts$/,
  /^db\/node-client\.ts$/,
  /^db\/migrate(-cli)?\.ts$/,
];

const folderOf = (file: string) => file.split("/")[0]!;

describe("layering", () => {
  it("reads imports of every kind (static, type-only, re-exports, dynamic)", () => {
    // The reader itself is checked on this file's shapes, so a missed form cannot pass silently.
    const sample = files.find((f) => f === "jobs/deps.ts")!;
    expect(importsOf(sample).some((spec) => spec.includes("pipeline/index.ts"))).toBe(true);
    expect(files.length).toBeGreaterThan(150);
  });

  it("no import runs against the order", () => {
    const against: string[] = [];
    for (const file of files) {
      for (const target of relativeTargets(file)) {
        const from = folderOf(file);
        const to = folderOf(target);
        if (from === to || !(to in RANK)) continue;
        if (RANK[from]! > RANK[to]!) continue;
        const edge = `${file} -> ${target}`;
        if (!(edge in ALLOWED)) against.push(edge);
      }
    }
    expect(against).toEqual([]);
  });

  it("every allowed exception still exists (the list cannot go stale)", () => {
    const edges = new Set(files.flatMap((file) => relativeTargets(file).map((target) => `${file} -> ${target}`)));
    expect(Object.keys(ALLOWED).filter((edge) => !edges.has(edge))).toEqual([]);
  });

  it("outside pipeline/, the pipeline is imported through its one entry point", () => {
    const inside = files
      .filter((file) => folderOf(file) !== "pipeline")
      .flatMap((file) =>
        relativeTargets(file)
          .filter((t) => t.startsWith("pipeline/") && t !== "pipeline/index.ts")
          .map((t) => `${file} -> ${t}`),
      );
    expect(inside).toEqual([]);
  });

  it("only the Node host's own modules use Node's APIs", () => {
    const users = files.filter(
      (file) => importsOf(file).some((spec) => spec.startsWith("node:")) && !NODE_ONLY.some((re) => re.test(file)),
    );
    expect(users).toEqual([]);
  });

  it("shared code reads no process environment", () => {
    const code = (file: string) => readFileSync(path.join(root, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
    const readers = files.filter((file) => /\bprocess\.env\b/.test(code(file)) && !NODE_ONLY.some((re) => re.test(file)));
    expect(readers).toEqual([]);
  });
});
