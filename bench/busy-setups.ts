/**
 * The two busy setups of bench/busy.bench.ts — what the fleetwarden host does while its ingest is
 * measured — and the scripted LLM's answers for the runs. See busy.bench.ts for how they are used.
 */
import { openDatabase } from "../db/client.ts";
import { applyMigrations } from "../db/migrate.ts";
import { createNodeClient } from "../db/node-client.ts";
import { simulatorInstances } from "../schema/index.ts";
import { createAgent } from "../pipeline/index.ts";
import type { ScriptedLlm } from "../test/support/scripted-llm.ts";
import { STORE_EVERY_REPORT } from "./processes.ts";

export const STATES = ["running", "loading", "exited"] as const;

export interface Busy {
  name: string;
  /** What the host does besides ingest, for the variant column. */
  describe(work: Work): string;
  env(llmUrl: string): Record<string, string>;
  /** Writes agents and a fleet into a fresh database file before the host starts. */
  prepare?(dbPath: string): Promise<void>;
  /** Pause between the end of one cron tick and the start of the next (they never overlap). */
  cronPauseMs: number;
  /** Agent and instance of the n-th webhook. */
  target(n: number): { agent: string; instance: string };
}

export interface Work {
  ticks: number;
  runs: number;
  llmRuns: number;
  llmCalls: number;
  largestPrompt: number;
}

export const RUNS: Busy = {
  name: "webhooks, 64 connections, while runs and cron ticks happen (200 instances)",
  describe: (w) =>
    `${w.runs} runs (${w.llmRuns} by the LLM, ${w.llmCalls} LLM calls, prompts up to ${w.largestPrompt} tokens), ${w.ticks} cron ticks`,
  env: (llmUrl) => ({
    ...STORE_EVERY_REPORT,
    SIMULATOR_INSTANCES: "200",
    SIMULATOR_FAILURE_RATE: "120",
    RECONCILE_INTERVAL_S: "1",
    DEBOUNCE_STATE_MS: "250",
    DEBOUNCE_HUMAN_MS: "250",
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "bench",
  }),
  cronPauseMs: 1000,
  target: (n) => ({ agent: "default", instance: `sim-${(n % 200) + 1}` }),
};

const AGENTS = 100;
const INSTANCES = 1000;
const PER_AGENT = INSTANCES / AGENTS;

export const TICKS: Busy = {
  name: `webhooks, 64 connections, while cron ticks run back to back (${AGENTS} agents × ${INSTANCES.toLocaleString("en")} instances)`,
  describe: (w) => `${w.ticks} full ticks of ${AGENTS} agents, ${w.runs} runs`,
  env: () => ({
    ...STORE_EVERY_REPORT,
    SIMULATOR_INSTANCES: String(INSTANCES),
    // As in bench/scale.bench.ts: steady ticks (failures at 120/h on 1,000 instances would add
    // ~30 state changes a second, i.e. ingest of their own, not tick work).
    SIMULATOR_FAILURE_RATE: "0",
    RECONCILE_INTERVAL_S: "1",
    DEBOUNCE_STATE_MS: "3600000",
    DEBOUNCE_HUMAN_MS: "3600000",
  }),
  async prepare(dbPath) {
    const client = await createNodeClient(`file:${dbPath}`);
    const db = openDatabase(client);
    await applyMigrations(db);
    const now = Date.now();
    const rows = Array.from({ length: INSTANCES }, (_, i) => ({
      id: `sim-${i + 1}`,
      state: "running",
      label: `a${Math.floor(i / PER_AGENT)}-node-${i}`,
      gpuName: "RTX 4090",
      gpuCount: 1,
      pricePerHour: 0.4,
      statusMessage: "running",
      startedAt: now,
      updatedAt: now,
    }));
    for (let i = 0; i < rows.length; i += 200) await db.insert(simulatorInstances).values(rows.slice(i, i + 200));
    for (let a = 0; a < AGENTS; a++) await createAgent(db, { id: `a${a}`, settings: { instanceFilter: { labelPrefix: `a${a}-` } } }, now);
    client.close();
  },
  cronPauseMs: 0,
  target: (n) => {
    const agent = n % AGENTS;
    return { agent: `a${agent}`, instance: `sim-${agent * PER_AGENT + (Math.floor(n / AGENTS) % PER_AGENT) + 1}` };
  },
};

/**
 * Each run: read the fleet and pin a fact (a mutation, so its turns are stored and history grows),
 * then answer. Tops the script up to `runs` runs, so it never holds more than that.
 */
export function scriptRuns(llm: ScriptedLlm, runs: number): void {
  llm.requests.length = 0;
  for (let i = Math.ceil(llm.pending / 2); i < runs; i++) {
    const fact =
      `instance sim-${(i % 200) + 1} was seen ${STATES[i % 3]} at step ${i}; keep an eye on its restarts and tell a human when it fails twice in an hour. `.repeat(
        3,
      );
    llm.push(
      {
        tools: [
          { name: "list_instances", arguments: {} },
          { name: "remember", arguments: { key: `note-${i % 40}`, fact: fact.slice(0, 480) } },
        ],
      },
      { text: "Checked the fleet; noted it." },
    );
  }
}
