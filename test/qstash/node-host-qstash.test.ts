import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";
import { signQStash, startFakeQStash, TEST_CURRENT_KEY, type FakeQStash } from "./fake-qstash.ts";
import { qstashVars } from "./qstash-deps.ts";

let fake: FakeQStash;
let host: NodeHost | null = null;
beforeEach(async () => {
  fake = await startFakeQStash();
});
afterEach(async () => {
  await host?.stop();
  host = null;
  await fake.close();
});

describe("Node host with SCHEDULER=qstash", () => {
  it("publishes to QStash and performs the run QStash delivers back over HTTP", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fw-qstash-host-"));
    host = await startNodeHost(
      {
        ...qstashVars(fake),
        PORT: "0",
        DATABASE_URL: `file:${join(dir, "fw.db")}`,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        DEBOUNCE_HUMAN_MS: "0",
        SIMULATOR_INSTANCES: "0",
      },
      { log: silentLogger },
    );
    const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" };
    expect(await (await fetch(`${host.url}/healthz`)).json()).toMatchObject({ scheduler: { kind: "qstash", ok: true } });

    const posted = await fetch(`${host.url}/api/agents/default/messages`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ text: "hello" }),
    });
    expect(posted.status).toBe(202);
    expect(fake.messages).toHaveLength(1);
    const [message] = fake.messages;

    // QStash delivers to PUBLIC_URL (a proxy in front of this host) and signs for that URL.
    const delivered = await fetch(`${host.url}/internal/deliveries`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Upstash-Signature": signQStash({ key: TEST_CURRENT_KEY, url: message!.destination, body: message!.body }),
      },
      body: message!.body,
    });
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ result: "succeeded" });
    const runs = await (await fetch(`${host.url}/api/agents/default/runs`, { headers: auth })).json();
    expect(runs.runs).toHaveLength(1);
  });
});
