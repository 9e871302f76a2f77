/**
 * The two hosts the shared scenarios run against, each started once per test file:
 * - node: `startNodeHost` on an embedded libSQL file, SCHEDULER=qstash, its client's round trips counted;
 * - worker: the deploy bundle in workerd (`unstable_startWorker`), DATABASE_URL pointing at the
 *   Hrana test server (migrated through the same protocol, as `npm run db:migrate` would), with
 *   Hrana requests counted as the Worker's database subrequests.
 * Both publish to one strict QStash fake that delivers back to them (PUBLIC_URL is routed to the
 * host's loopback address), and both ask the scripted LLM. Their scheduled tick is the Worker's
 * cron trigger (`/__scheduled`, which waits for the handler) and the Node host's interval tick
 * (`POST /api/cron?fanout=1`, the same function).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient as createWebClient } from "@libsql/client/web";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { createNodeClient } from "../../db/node-client.ts";
import { startNodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { startFakeQStash, TEST_PUBLIC_URL } from "../qstash/fake-qstash.ts";
import { qstashVars } from "../qstash/qstash-deps.ts";
import { startHranaServer } from "../support/hrana-server.ts";
import { countingClient, type CallCounter } from "../support/counting-client.ts";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { bootWorker } from "../worker/worker-boot.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";
import { SCENARIO_VARS, type ScenarioHost } from "./driver.ts";

/** Answers `res` or throws with its status and body. */
async function expectOk(res: Response, what: string): Promise<void> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${text}`);
}

async function outside() {
  // Real time: QStash's Not-Before is whole seconds rounded up, so a hop can wait up to a second.
  const qstash = await startFakeQStash();
  const llm = await new ScriptedLlm().start();
  return { qstash, llm, vars: { ...qstashVars(qstash), ...SCENARIO_VARS, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-scripted" } };
}

export async function startNodeScenarioHost(extra: Record<string, string> = {}): Promise<ScenarioHost> {
  const { qstash, llm, vars: base } = await outside();
  const vars = { ...base, ...extra };
  const url = `file:${join(mkdtempSync(join(tmpdir(), "fw-scenario-node-")), "fw.db")}`;
  // The cron interval is pushed out of the way: the scenarios run the tick themselves.
  // The host's round trips are counted at its database client (each execute or batch is one).
  let counted: CallCounter | undefined;
  const host = await startNodeHost(
    { ...vars, PORT: "0", DATABASE_URL: url },
    {
      log: silentLogger,
      cronIntervalMs: 3_600_000,
      instrumentClient: (inner) => {
        const { client, counter } = countingClient(inner);
        counted = counter;
        return client;
      },
    },
  );
  qstash.route = (destination) => destination.replace(TEST_PUBLIC_URL, host.url);
  const client = await createNodeClient(url);
  return {
    name: "node",
    baseUrl: host.url,
    qstash,
    llm,
    db: openDatabase(client),
    dbRequests: () => counted?.calls ?? 0,
    costs: [],
    runScheduled: async () =>
      expectOk(
        await fetch(`${host.url}/api/cron?fanout=1`, { method: "POST", headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }),
        "the scheduled tick",
      ),
    close: async () => {
      await host.stop();
      client.close();
      await qstash.close();
      await llm.close();
    },
  };
}

export async function startWorkerScenarioHost(extra: Record<string, string> = {}): Promise<ScenarioHost> {
  const { qstash, llm, vars: base } = await outside();
  const vars = { ...base, ...extra };
  const hrana = await startHranaServer({ authToken: "turso-scenario-token" });
  const client = createWebClient({ url: hrana.url, authToken: "turso-scenario-token" });
  const db = openDatabase(client);
  await applyMigrations(db);
  const worker = await bootWorker({ ...vars, DATABASE_URL: hrana.url, DATABASE_AUTH_TOKEN: "turso-scenario-token" });
  qstash.route = (destination) => destination.replace(TEST_PUBLIC_URL, worker.url);
  return {
    name: "worker",
    baseUrl: worker.url,
    qstash,
    llm,
    db,
    // Costs are measured around one Worker invocation at a time, while the suite itself reads nothing.
    dbRequests: () => hrana.requests.length,
    costs: [],
    runScheduled: async () => expectOk(await worker.fetch("/__scheduled?cron=*+*+*+*+*"), "the cron trigger"),
    close: async () => {
      await worker.dispose();
      client.close();
      await hrana.close();
      await qstash.close();
      await llm.close();
    },
  };
}
