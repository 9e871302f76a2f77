/**
 * The README's first-hour `curl` commands work as written (issue #38 item 4): each one is read
 * out of README.md (line continuations joined, its method, headers and `-d` body taken as curl
 * would), `$T` replaced by the admin token, and sent to the app on a simulated fleet. None may
 * answer 4xx or 5xx: a failure injection without its `{kind}` body is a 400, so a README that
 * drops the body fails here.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { buildApp } from "../../functions/app.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDb, createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";

interface Curl {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Splits a shell line into words: single and double quotes kept together, quotes removed. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** Every curl command of the README's sh blocks, as curl would send it. */
export function readmeCurls(markdown: string): Curl[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, " "));
  const curls: Curl[] = [];
  for (const line of blocks.flatMap((b) => b.split("\n")).map((l) => l.trim())) {
    if (!line.startsWith("curl ")) continue;
    const w = words(line.replaceAll("$T", TEST_ADMIN_TOKEN));
    const curl: Curl = { method: "GET", url: "", headers: {}, body: undefined };
    for (let i = 1; i < w.length; i++) {
      const word = w[i]!;
      if (word === "-X") curl.method = w[++i]!;
      else if (word === "-H") {
        const [name, ...value] = w[++i]!.split(":");
        curl.headers[name!.trim().toLowerCase()] = value.join(":").trim();
      } else if (word === "-d" || word === "--data") {
        curl.body = w[++i]!;
        if (curl.method === "GET") curl.method = "POST";
      } else if (!word.startsWith("-")) curl.url = word;
    }
    curls.push(curl);
  }
  return curls;
}

describe("the README's curl commands", () => {
  it("parses a failure injection with its body", () => {
    const [curl] = readmeCurls(
      '```sh\ncurl -s -X POST -H "Authorization: Bearer $T" -H \'content-type: application/json\' \\\n  -d \'{"kind":"exit"}\' http://localhost:8787/api/simulator/instances/sim-1/fail\n```\n',
    );
    expect(curl).toEqual({
      method: "POST",
      url: "http://localhost:8787/api/simulator/instances/sim-1/fail",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: '{"kind":"exit"}',
    });
  });

  it("each one, sent as written, is answered 2xx (the failure injection included)", async () => {
    const db = await createTestDb();
    const clock = new FakeClock();
    const provider = new SimulatorProvider(db, clock);
    const deps = await createTestDeps({ db, clock, provider, vars: { SIMULATOR_FAILURE_RATE: "0" } });
    await provider.seed(4);
    await reconcileFleet(deps, "default");
    const app = buildApp(() => deps);
    const curls = readmeCurls(readFileSync(new URL("../../README.md", import.meta.url), "utf8")).filter((c) =>
      c.url.startsWith("http://localhost:8787/"),
    );
    expect(curls.some((c) => c.url.endsWith("/api/simulator/instances/sim-1/fail"))).toBe(true);
    for (const curl of curls) {
      const url = new URL(curl.url);
      const res = await app.request(`${url.pathname}${url.search}`, {
        method: curl.method,
        headers: curl.headers,
        ...(curl.body === undefined ? {} : { body: curl.body }),
      });
      expect(`${curl.method} ${url.pathname}: ${res.status}`).toMatch(/: 2\d\d$/);
    }
    expect((await provider.get("sim-1"))!.state).toBe("exited");
  });
});
