/**
 * What the isolates of bench/cpu.bench.ts talk to, all in the bench's own process (so none of its
 * CPU is counted in an isolate): Turso played by the Hrana-over-HTTP test server, QStash by the
 * strict fake (its published messages are handed to an isolate by the bench, signed as QStash
 * signs them), and the LLM by the scripted server. Also the Worker's vars, and the requests of each
 * kind of invocation, built and signed here before an isolate's clock starts.
 */
import { createClient } from "@libsql/client/web";
import { and, asc, desc, eq } from "drizzle-orm";
import { openDatabase } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { messages, runs } from "../schema/index.ts";
import { signQStash, startFakeQStash, TEST_PUBLIC_URL, type PublishedMessage } from "../test/qstash/fake-qstash.ts";
import { qstashVars } from "../test/qstash/qstash-deps.ts";
import { startHranaServer } from "../test/support/hrana-server.ts";
import { ScriptedLlm } from "../test/support/scripted-llm.ts";
import { signedWebhook } from "../test/support/signed-webhook.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../test/support/test-deps.ts";
import { BASELINE_TABLE } from "./cpu-baseline.ts";
import type { Invocation } from "./cpu-protocol.ts";
import { STORE_EVERY_REPORT } from "./processes.ts";

const TURSO_TOKEN = "bench-turso-token";
export const INSTANCES = 4;

export type World = Awaited<ReturnType<typeof startWorld>>;
type Request = NonNullable<Invocation["request"]>;

export async function startWorld() {
  const hrana = await startHranaServer({ authToken: TURSO_TOKEN });
  const client = createClient({ url: hrana.url, authToken: TURSO_TOKEN });
  const db = openDatabase(client);
  await applyMigrations(db); // as `npm run db:migrate` does before a deploy
  await client.execute(BASELINE_TABLE);
  const qstash = await startFakeQStash();
  const llm = await new ScriptedLlm().start();
  // The summariser's requests (compaction) carry no tools; its summary is about 1,000 tokens, as
  // a model's summary of some twenty runs would be (the cap is 15% of the budget, 4,500).
  llm.onSummary = () => ({
    text: Array.from(
      { length: 40 },
      (_, i) => `Run ${i + 1}: sim-${(i % INSTANCES) + 1} exited; its log showed no fatal error, it was restarted and came back running.`,
    ).join("\n"),
  });

  /** The Worker's vars: wrangler.toml's, with the differences a bench loop needs (each said why). */
  const env: Record<string, string> = {
    ...qstashVars(qstash),
    DATABASE_URL: hrana.url,
    DATABASE_AUTH_TOKEN: TURSO_TOKEN,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-bench",
    AGENT_MODEL: "scripted-model",
    LLM_MAX_RETRIES: "0",
    CONTEXT_BUDGET_TOKENS: "30000",
    SIMULATOR_INSTANCES: String(INSTANCES),
    // The run is delivered at once instead of after the window (the window changes when, not what).
    DEBOUNCE_HUMAN_MS: "0",
    DEBOUNCE_STATE_MS: "0",
    // Every tick reconciles, as a production tick does with the default 60 s interval and one tick a minute.
    RECONCILE_INTERVAL_S: "1",
    // Deterministic ticks: no random simulated failures.
    SIMULATOR_FAILURE_RATE: "0",
    // The loop restarts the same few instances far more often than an hour allows.
    ACTION_RATE_LIMIT_PER_HOUR: "10000",
    // Every report stored: the loop reports the same few instances far faster than the flood bound lets through.
    ...STORE_EVERY_REPORT,
  };

  let webhookCounter = 0;
  let chatCounter = 0;
  const json = (url: string, body: unknown, headers: Record<string, string> = {}): Request => ({
    url,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const signedDelivery = (destination: string, body: string): Request => ({
    url: destination,
    method: "POST",
    headers: { "content-type": "application/json", "Upstash-Signature": signQStash({ url: destination, body }), "Upstash-Retried": "0" },
    body,
  });

  return {
    env,
    llm,
    qstash,
    /** A signed instance webhook: `instance` reports `state`. */
    webhook(instance: string, state: string): Request {
      const signed = signedWebhook(`msg_cpu_${++webhookCounter}_${Date.now()}`, {
        instanceId: instance,
        state,
        message: `container ${state}`,
      });
      return { url: `${TEST_PUBLIC_URL}/webhooks/default/instances`, method: signed.method, headers: signed.headers, body: signed.body };
    },
    chat(): Request {
      return json(
        `${TEST_PUBLIC_URL}/api/agents/default/messages`,
        { text: `How is the fleet doing? (question ${++chatCounter})` },
        { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      );
    },
    /** POST /api/cron: every agent's tick inline (what the scheduled handler does once ticks run inline). */
    cronInline(): Request {
      return json(`${TEST_PUBLIC_URL}/api/cron`, {}, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
    },
    /** One agent's tick delivery, as the fan-out publishes it. */
    tickDelivery(): Request {
      return signedDelivery(`${TEST_PUBLIC_URL}/internal/deliveries`, JSON.stringify({ type: "tick", agentId: "default" }));
    },
    /** The oldest published message not handed out yet (of `type`, when given), as QStash delivers it. */
    takePublished(type?: string): Request | null {
      const message = qstash.messages.find(
        (m) => m.state === "pending" && (!type || (JSON.parse(m.body) as { type: string }).type === type),
      );
      if (!message) return null;
      message.state = "delivered";
      return signedDelivery(message.destination, message.body);
    },
    pendingPublished: (): PublishedMessage[] => qstash.messages.filter((m) => m.state === "pending"),
    /** Uses up scripted answers nobody asked for (a settled run that was stale or skipped). */
    async discardScripted(): Promise<void> {
      while (llm.pending) {
        const res = await fetch(`${llm.url}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            model: "discard",
            messages: [{ role: "user", content: "discard" }],
            tools: [{ type: "function", function: { name: "discard", parameters: {} } }],
          }),
        });
        await res.text();
      }
    },
    /**
     * Grows the default agent's history (epoch 1) to at least `tokens` by storing copies of the
     * turns its real runs stored, with their measured counts: the history of a session in steady
     * use in seconds instead of a hundred runs.
     */
    async growHistory(tokens: number): Promise<void> {
      const stored = await db
        .select()
        .from(messages)
        .where(and(eq(messages.agentId, "default"), eq(messages.sessionEpoch, 1)))
        .orderBy(asc(messages.id));
      if (stored.length === 0) throw new Error("cpu bench: no stored turns to grow the history from");
      let total = stored.reduce((sum, m) => sum + m.tokens, 0);
      while (total < tokens) {
        await db.insert(messages).values(stored.map(({ id: _id, ...m }) => ({ ...m, createdAt: Date.now() })));
        total += stored.reduce((sum, m) => sum + m.tokens, 0);
      }
    },
    /** The latest run's prompt size (tokens of its largest request). */
    async lastContextTokens(): Promise<number> {
      const [row] = await db.select({ tokens: runs.contextTokens }).from(runs).orderBy(desc(runs.runId)).limit(1);
      return row?.tokens ?? 0;
    },
    async close() {
      client.close();
      await hrana.close();
      await qstash.close();
      await llm.close();
    },
  };
}
