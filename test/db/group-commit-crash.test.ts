/**
 * Group commit under a crash: the Node host (a child process, `npm start`'s entry point) receives
 * hundreds of concurrent webhooks and chat messages and is killed (SIGKILL) while batches are in
 * flight. Every request answered 2xx is stored exactly once, with its instance history row;
 * nothing is stored half.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeClient } from "../../db/node-client.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { freePort, waitFor } from "../support/child-process-waits.ts";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

const TOTAL = 400;
const IN_FLIGHT = 64;
const KILL_AFTER = 150;

describe("group commit killed mid-batch", () => {
  it("every request answered 2xx is stored exactly once, with its history", async () => {
    const port = await freePort();
    const path = join(mkdtempSync(join(tmpdir(), "fw-gc-crash-")), "fw.db");
    const env = {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: `file:${path}`,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      SIMULATOR_INSTANCES: "0",
    };
    const child = spawn(process.execPath, ["--import", "tsx", "functions/node.ts"], { env, stdio: "ignore" });
    children.push(child);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const base = `http://127.0.0.1:${port}`;
    await waitFor("the Node host to start", async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 30_000);

    // Pre-built requests: even ones are webhooks (a new instance each), odd ones chat messages.
    const requests = Array.from({ length: TOTAL }, (_, i) =>
      i % 2 === 0
        ? {
            key: `webhook:crash_${i}`,
            url: `${base}/webhooks/default/instances`,
            init: signedWebhook(`crash_${i}`, { instanceId: `i-${i}`, state: "running" }),
          }
        : {
            key: `message:crash_${i}`,
            url: `${base}/api/agents/default/messages`,
            init: {
              method: "POST",
              headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json", "Idempotency-Key": `crash_${i}` },
              body: JSON.stringify({ text: `message ${i}` }),
            },
          },
    );
    const acknowledged: string[] = [];
    let answered = 0;
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const request = requests[next++]!;
        try {
          const res = await fetch(request.url, request.init);
          answered++;
          if (res.status >= 200 && res.status < 300) acknowledged.push(request.key);
          if (answered === KILL_AFTER) child.kill("SIGKILL");
        } catch {
          // the process is gone: this request was never answered
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    await exited;

    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER - IN_FLIGHT);
    expect(acknowledged.length).toBeLessThan(TOTAL);
    const client = await createNodeClient(`file:${path}`);
    const rows = await client.execute(
      `select e.dedup_key, count(distinct e.id) as events, count(ie.id) as history
       from events e left join instance_events ie on ie.agent_id = e.agent_id and ie.event_id = e.id
       where e.dedup_key like '%crash_%' group by e.dedup_key`,
    );
    const stored = new Map(rows.rows.map((r) => [String(r.dedup_key), { events: Number(r.events), history: Number(r.history) }]));
    const missing = acknowledged.filter((key) => !stored.has(key));
    expect(missing).toEqual([]);
    for (const [key, counts] of stored) {
      expect(counts.events, key).toBe(1);
      // A webhook's event and its history row commit together; a chat message has no history.
      expect(counts.history, key).toBe(key.startsWith("webhook:") ? 1 : 0);
    }
    const instances = await client.execute("select count(*) as n from instances where id like 'i-%'");
    expect(Number(instances.rows[0]!.n)).toBe([...stored.keys()].filter((k) => k.startsWith("webhook:")).length);
    client.close();
  }, 120_000);
});
