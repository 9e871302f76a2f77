/** Rows of the settings table: the LLM endpoint and what one run of an agent may do. */
import { z } from "zod";
import { plainText } from "../plain-text.ts";
import {
  AGENT_MAX_ITERATIONS_MAX,
  AGENT_MODEL_MAX_CHARS,
  CONTEXT_BUDGET_MAX_TOKENS,
  DEBOUNCE_MAX_MS,
  GUARD_COUNT_MAX,
  INTERVAL_MAX_S,
  LLM_TIMEOUT_MAX_MS,
  MAX_PENDING_WAKES_MAX,
  PER_HOUR_MAX,
  RUN_LEASE_MAX_MS,
} from "../setting-bounds.ts";
import { optionalToken, optionalUrl } from "./forms.ts";
import { fraction, ms, whole } from "./numbers.ts";
import { setting } from "./setting.ts";

const llm = "LLM";
const runs = "Agent runs";
/** Per agent a debounce window is whole milliseconds. */
const debounceMs = whole(0, DEBOUNCE_MAX_MS, 0).agentSchema;

export const LLM_ROWS = {
  OPENAI_API_KEY: setting({
    group: llm,
    doc: "LLM key; with neither this nor `OPENAI_BASE_URL` the rules policy decides",
    schema: optionalToken,
    at: "llm.apiKey",
    secret: true,
  }),
  OPENAI_BASE_URL: setting({
    group: llm,
    doc: "any OpenAI-compatible endpoint (proxy, Ollama, vLLM)",
    schema: optionalUrl,
    at: "llm.baseUrl",
    defaultText: "OpenAI",
  }),
  AGENT_MODEL: setting({
    group: llm,
    doc: "model name",
    schema: z.string().trim().max(AGENT_MODEL_MAX_CHARS, `must be at most ${AGENT_MODEL_MAX_CHARS} characters`).default("gpt-4o-mini"),
    at: "llm.model",
    bounds: `at most ${AGENT_MODEL_MAX_CHARS} characters`,
    agent: {
      key: "model",
      schema: plainText(
        z.string().trim().min(1, "must not be empty").max(AGENT_MODEL_MAX_CHARS, `must be at most ${AGENT_MODEL_MAX_CHARS} characters`),
      ),
      field: { label: "Model", input: "text", hint: "AGENT_MODEL for this agent." },
      show: (model) => (model === undefined ? "no LLM configured: the rules policy decides" : String(model)),
    },
  }),
  LLM_TOOL_CHOICE: setting({
    group: llm,
    doc: '`auto` sends `tool_choice: "auto"` with the tools; `none-sent` omits the field (for a server or proxy that refuses it, e.g. vLLM without `--enable-auto-tool-choice`)',
    schema: z.enum(["auto", "none-sent"]).default("auto"),
    at: "llm.toolChoice",
  }),
  LLM_TIMEOUT_MS: setting({ group: llm, doc: "per-call timeout", ...whole(1, LLM_TIMEOUT_MAX_MS, 60000), at: "llm.timeoutMs" }),
  LLM_MAX_RETRIES: setting({ group: llm, doc: "SDK retries per call", ...whole(0, 10, 2), at: "llm.maxRetries" }),
  LLM_OUTPUT_MAX_CHARS: setting({
    group: llm,
    doc: "a reply, refusal or tool-call arguments over this many characters are cut on arrival, before anything counts or stores them",
    ...whole(1, 1_048_576, 32768),
    at: "llmOutputMaxChars",
  }),
  LLM_TRANSCRIPT_DAYS: setting({
    group: llm,
    doc: "every LLM call's request and response is kept this many days, then pruned by the cron tick",
    ...whole(1, 3650, 14),
    at: "llmTranscriptDays",
  }),
  AGENT_MODE: setting({
    group: runs,
    doc: "`shadow`: every decision runs as usual, but provider actions and approval requests made without a human are recorded as proposals and never reach the provider",
    schema: z.enum(["act", "shadow"]).default("act"),
    at: "mode",
    agent: { key: "mode", schema: z.enum(["act", "shadow"]), show: String },
  }),
  AGENT_MAX_ITERATIONS: setting({
    group: runs,
    doc: "LLM calls per run (the tool loop's bound; a replay's bound too)",
    ...whole(1, AGENT_MAX_ITERATIONS_MAX, 8),
    at: "agentMaxIterations",
  }),
  CONTEXT_BUDGET_TOKENS: setting({
    group: runs,
    doc: "hard prompt budget (system prompt, tool schemas and messages); at least system prompt + tool schemas + 1,000, a smaller value is refused naming the minimum",
    ...whole(1, CONTEXT_BUDGET_MAX_TOKENS, 30000),
    at: "contextBudgetTokens",
    agent: { key: "contextBudgetTokens", field: { label: "Context budget (tokens)", input: "number" }, show: (n) => `${n} tokens` },
  }),
  DEBOUNCE_HUMAN_MS: setting({
    group: runs,
    doc: "debounce window for chat and manual triggers",
    ...fraction(0, DEBOUNCE_MAX_MS, 2000),
    at: "debounceHumanMs",
    agent: {
      key: "debounceHumanMs",
      schema: debounceMs,
      field: { label: "Debounce for human triggers (ms)", input: "number" },
      show: (n) => `${n} ms`,
    },
  }),
  DEBOUNCE_STATE_MS: setting({
    group: runs,
    doc: "debounce window for state changes (a due wake's run is requested for its due time, without it)",
    ...fraction(0, DEBOUNCE_MAX_MS, 10000),
    at: "debounceStateMs",
    agent: {
      key: "debounceStateMs",
      schema: debounceMs,
      field: { label: "Debounce for state changes (ms)", input: "number" },
      show: (n) => `${n} ms`,
    },
  }),
  RUN_LEASE_MS: setting({
    group: runs,
    doc: "a run holding the lease longer is dead; its work is re-claimed",
    ...whole(1, RUN_LEASE_MAX_MS, 600000),
    at: "runLeaseMs",
  }),
  MAX_EVENT_ATTEMPTS: setting({
    group: runs,
    doc: "an event or wake handed back by this many failed or crashed runs is dropped as `poison` and a human is notified once",
    ...whole(1, GUARD_COUNT_MAX, 3),
    at: "maxEventAttempts",
  }),
  MAX_PENDING_WAKES: setting({
    group: runs,
    doc: "pending wakes per agent",
    ...whole(1, MAX_PENDING_WAKES_MAX, 50),
    at: "maxPendingWakes",
    agent: { key: "maxPendingWakes", field: { label: "Most pending wakes", input: "number" }, show: String },
  }),
  WAKE_MIN_DELAY_S: setting({
    group: runs,
    doc: "a self-scheduled check sooner than this is raised to it (the tool result says so)",
    ...whole(0, INTERVAL_MAX_S, 60),
    to: ms,
    at: "wakeMinDelayMs",
  }),
  WAKES_PER_HOUR: setting({
    group: runs,
    doc: "self-scheduled checks per agent per hour (cancelled ones count); past it `schedule_next_check` and the rules policy are refused",
    ...whole(0, PER_HOUR_MAX, 12),
    at: "wakesPerHour",
  }),
  RULES_MAX_RESTARTS_PER_HOUR: setting({
    group: runs,
    doc: "rules policy: restarts of one instance per hour",
    ...whole(0, GUARD_COUNT_MAX, 3),
    at: "rulesMaxRestartsPerHour",
  }),
  RECONCILE_INTERVAL_S: setting({
    group: runs,
    doc: "minimum interval between fleet reconciliations",
    ...whole(1, INTERVAL_MAX_S, 60),
    to: ms,
    at: "reconcileIntervalMs",
  }),
};
