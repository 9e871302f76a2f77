/**
 * A Worker deployment is told every secret it may need (issue #37, item 6): each setting marked
 * `secret: true` in the settings table is listed in wrangler.toml's comments (to be set with
 * `wrangler secret put`, never as a [vars] value a deploy would publish) and in the deploy guide
 * (docs/operations.md, "Deploy to Cloudflare Workers"); both name QStash's regional URL with the
 * regions upstash/qstash-js knows. A secret row added without its line in either fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROWS } from "../../runtime/settings/table.ts";

const ROOT = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const SECRETS = ROWS.filter((row) => row.secret).map((row) => row.name);
const REGIONAL = ["https://qstash-eu-central-1.upstash.io", "https://qstash-us-east-1.upstash.io"];

/** The deploy guide: docs/operations.md's section, up to the next `## ` heading. */
function deployGuide(): string {
  const page = read("docs/operations.md");
  const start = page.indexOf("## Deploy to Cloudflare Workers");
  expect(start).toBeGreaterThan(-1);
  const end = page.indexOf("\n## ", start + 3);
  return page.slice(start, end === -1 ? undefined : end);
}

describe("the deployment's secrets", () => {
  it("are the settings marked secret (the list the checks below use)", () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(16);
    for (const name of [
      "ADMIN_TOKEN",
      "WEBHOOK_SECRET",
      "SLACK_SIGNING_SECRET",
      "RUNPOD_API_KEY",
      "LAMBDA_API_KEY",
      "VAST_WEBHOOK_SECRET",
    ]) {
      expect(SECRETS).toContain(name);
    }
  });

  it("are each listed in wrangler.toml's comments, and none under [vars]", () => {
    const toml = read("wrangler.toml");
    const commented = new Set(
      toml
        .split("\n")
        .filter((line) => line.trimStart().startsWith("#"))
        .flatMap((line) => line.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []),
    );
    expect(SECRETS.filter((name) => !commented.has(name))).toEqual([]);
    const assigned = toml
      .split("\n")
      .filter((line) => !line.trimStart().startsWith("#"))
      .map((line) => /^\s*([A-Z][A-Z0-9_]*)\s*=/.exec(line)?.[1])
      .filter(Boolean);
    expect(assigned.filter((name) => SECRETS.includes(name!))).toEqual([]);
  });

  it("are each named in the deploy guide", () => {
    const guide = deployGuide();
    expect(SECRETS.filter((name) => !guide.includes(`\`${name}\``))).toEqual([]);
  });

  it("come with QStash's regional URL in both", () => {
    const toml = read("wrangler.toml");
    const guide = deployGuide();
    for (const text of [toml, guide]) {
      expect(text).toContain("QSTASH_URL");
      for (const url of REGIONAL) expect(text).toContain(url);
    }
    expect(ROWS.some((row) => row.name === "QSTASH_URL")).toBe(true);
  });
});
