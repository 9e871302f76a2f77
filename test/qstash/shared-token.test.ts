/**
 * Two deployments sharing one QStash token (two apps with different PUBLIC_URLs, each with its own
 * database, against one fake QStash, both served over loopback): each publishes the same dedup
 * keys — a fresh database's first run is `run:default:1`, every tick of one minute
 * `tick:default:<minute>` — and neither's messages may be taken for duplicates of the other's.
 */
import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { listRuns, qstashSchedulerFromConfig } from "../../pipeline/index.ts";
import { fanOutTick } from "../../jobs/tick.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { authHeaders, createTestDeps, testConfig } from "../support/test-deps.ts";
import { startFakeQStash, type FakeQStash } from "./fake-qstash.ts";
import { qstashVars } from "./qstash-deps.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** One deployment: its own database and PUBLIC_URL, listening on loopback, reached by the fake through `route`. */
async function deployment(fake: FakeQStash, clock: FakeClock, publicUrl: string, routes: Map<string, string>) {
  const config = testConfig({ ...qstashVars(fake), PUBLIC_URL: publicUrl, DEBOUNCE_HUMAN_MS: "0" });
  const deps = await createTestDeps({ config, scheduler: qstashSchedulerFromConfig(config), clock });
  const server = serve({ fetch: buildApp(() => deps).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((listening) => server.once("listening", listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.set(publicUrl, url);
  closers.push(() => new Promise((closed) => server.close(() => closed())));
  return { deps, url, publicUrl };
}

describe("two deployments on one QStash token", () => {
  it("neither drops the other's first run or its ticks: their deduplication ids differ", async () => {
    const fake = await startFakeQStash();
    closers.push(fake.close);
    const clock = new FakeClock(Date.now());
    fake.now = () => clock.now();
    const routes = new Map<string, string>();
    fake.route = (destination) => {
      for (const [publicUrl, url] of routes) if (destination.startsWith(publicUrl)) return destination.replace(publicUrl, url);
      throw new Error(`no deployment at ${destination}`);
    };
    const production = await deployment(fake, clock, "https://fleet.example.com", routes);
    const staging = await deployment(fake, clock, "https://staging.fleet.example.com", routes);

    for (const d of [production, staging]) {
      const res = await fetch(`${d.url}/api/agents/default/messages`, {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ text: "status?" }),
      });
      expect(res.status).toBe(202);
      await fanOutTick(d.deps);
    }
    // Both published run:default:1 and tick:default:<minute>; QStash enqueued all four.
    expect(fake.requests.map((r) => r.status)).toEqual([201, 200, 201, 200]);
    const enqueued = fake.messages.map((m) => [new URL(m.destination).host, JSON.parse(m.body).type]);
    expect(enqueued).toEqual([
      ["fleet.example.com", "run"],
      ["fleet.example.com", "tick"],
      ["staging.fleet.example.com", "run"],
      ["staging.fleet.example.com", "tick"],
    ]);

    clock.advance(1000); // Not-Before is whole seconds, rounded up
    await fake.drain();
    expect(fake.messages.map((m) => m.attempts)).toEqual([[200], [200], [200], [200]]);
    for (const d of [production, staging]) expect((await listRuns(d.deps, "default", 5)).map((r) => r.status)).toEqual(["succeeded"]);
  });
});
