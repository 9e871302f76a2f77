/**
 * The agent run's test fixture, without vitest (so benchmarks can use it too): real deps on
 * in-memory libSQL with the agent run step, the OpenAI SDK model pointed at a scripted server on
 * loopback, a seeded simulated fleet mirrored in fleetwarden's view, and helpers that drive the
 * real pipeline (ingest → debounce → claim → run → finish) with the fake clock.
 */
import { eq, and, desc } from "drizzle-orm";
import { createTestDb, createTestDeps, type TestDeps } from "./test-deps.ts";
import { deliverDue } from "./drive.ts";
import type { ScriptedLlm } from "./scripted-llm.ts";
import { FakeClock } from "./fake-clock.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { OpenAiChatModel } from "../../agent/llm/openai-model.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { instances, runs } from "../../schema/index.ts";
import type { BreakerPolicy } from "../../agent/llm/breaker.ts";

export interface AgentFixture {
  deps: TestDeps;
  llm: ScriptedLlm | null;
}

export async function agentFixture(
  options: { llm?: ScriptedLlm | null; vars?: Record<string, string>; instances?: number; breaker?: BreakerPolicy } = {},
): Promise<AgentFixture> {
  const db = await createTestDb();
  const clock = new FakeClock();
  const provider = new SimulatorProvider(db, clock);
  const count = options.instances ?? 2;
  await provider.seed(count);
  const llm = options.llm ?? null;
  const vars = {
    LLM_TIMEOUT_MS: "2000",
    LLM_MAX_RETRIES: "1",
    ...(llm ? { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test" } : {}),
    ...options.vars,
  };
  const deps = await createTestDeps({
    db,
    clock,
    provider,
    vars,
    runStep: createAgentRunStep(options.breaker ? { breaker: options.breaker } : {}),
  });
  if (deps.config.llm) deps.llm = new OpenAiChatModel({ ...deps.config.llm, model: "scripted-model" });
  const now = clock.now();
  if (count > 0) {
    await db.insert(instances).values(
      Array.from({ length: count }, (_, i) => ({
        agentId: "default",
        id: `sim-${i + 1}`,
        state: "running",
        stateAt: now - 60_000,
        lastSeenAt: now,
        updatedAt: now,
      })),
    );
  }
  return { deps, llm };
}

let messageCounter = 0;

/** A human chat message, then the pipeline runs until idle; returns the newest run row. */
export async function say(deps: TestDeps, text: string) {
  await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: `message:${++messageCounter}`, payload: { text } });
  return runPipeline(deps);
}

export async function trigger(deps: TestDeps, event: { source: "webhook" | "manual"; payload: Record<string, unknown> }) {
  await ingestEvent(deps, {
    agentId: "default",
    priority: event.source === "manual" ? 0 : 1,
    dedupKey: `event:${++messageCounter}`,
    ...event,
  });
  return runPipeline(deps);
}

/** Advances past the debounce windows and delivers everything due; returns the newest run. */
export async function runPipeline(deps: TestDeps) {
  deps.clock.advance(deps.config.debounceStateMs);
  await deliverDue(deps);
  return latestRun(deps);
}

export async function latestRun(deps: TestDeps) {
  const [row] = await deps.db.select().from(runs).where(eq(runs.agentId, "default")).orderBy(desc(runs.runId)).limit(1);
  if (!row) throw new Error("no run happened");
  return row;
}

/** Every answer of the fixture's model arrives after the run's lease ran out (the fake clock moves a lease on). */
export function answerAfterTheLease(deps: TestDeps) {
  const model = deps.llm!;
  deps.llm = {
    model: model.model,
    complete: async (request) => {
      const answer = await model.complete(request);
      deps.clock.advance(deps.config.runLeaseMs); // the answer took longer than the lease
      return answer;
    },
  };
}

export async function setInstanceState(deps: TestDeps, id: string, state: string) {
  await deps.db
    .update(instances)
    .set({ state, stateAt: deps.clock.now() })
    .where(and(eq(instances.agentId, "default"), eq(instances.id, id)));
}

/** Stores earlier runs' turns (as the pipeline writes them) until the history reaches `tokens`. */
export async function seedHistory(deps: TestDeps, tokens: number, options: { withToolPairs?: boolean; startRun?: number } = {}) {
  const { toConversationTurns } = await import("../../agent/prompt/conversation.ts");
  const { messages } = await import("../../schema/index.ts");
  const { countMessage } = await import("../../agent/prompt/tokens.ts");
  let total = 0;
  let runId = options.startRun ?? 1000;
  while (total < tokens) {
    runId++;
    const turns: import("../../agent/llm/chat-model.ts").ChatMessage[] = [
      {
        role: "user",
        content: `Run ${runId}: Human message: how is the fleet? ${"Please check throughput on sim-1 and sim-2 again. ".repeat(20)}`,
      },
    ];
    if (options.withToolPairs) {
      const id = `seed_${runId}`;
      turns.push(
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id, type: "function", function: { name: "reboot_instance", arguments: '{"instance_id":"sim-1","reason":"slow"}' } },
          ],
        },
        { role: "tool", tool_call_id: id, content: `{"status":"succeeded","detail":"${"ok ".repeat(50)}"}` },
      );
    }
    turns.push({
      role: "assistant",
      content: `Run ${runId}: ${"sim-1 was restarted after exiting; throughput is nominal again. ".repeat(20)}`,
    });
    const rows = toConversationTurns(turns).map((t) => ({ ...t, agentId: "default", sessionEpoch: 1, runId, createdAt: deps.clock.now() }));
    await deps.db.insert(messages).values(rows);
    total += turns.reduce((sum, m) => sum + countMessage(m), 0);
  }
  return total;
}
