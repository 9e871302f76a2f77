/**
 * The simulation's LLM: a seeded, in-process ChatModel that answers like a real endpoint might —
 * tool calls (valid and malformed), long and short answers, failures and slow answers (the fake
 * clock jumps, sometimes past the run's lease). Every request it receives is checked against the
 * agent's guarantees: within the token budget, and no tool call separated from its result.
 */
import type { ChatCompletion, ChatMessage, ChatModel, ChatTool } from "../../agent/llm/chat-model.ts";
import { countPrompt } from "../../agent/prompt/tokens.ts";
import { pairsIntact } from "../../agent/prompt/turns.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import type { Rng } from "./rng.ts";

const WORDS = "sim-1 exited oom restart loader gpu memory check again later healthy running stopped".split(" ");

export class SimModel implements ChatModel {
  readonly model = "sim-model";
  readonly violations: string[] = [];
  requests = 0;
  private callIds = 0;

  constructor(
    private readonly rng: Rng,
    private readonly clock: FakeClock,
    private readonly budget: number,
    private readonly leaseMs: number,
  ) {}

  async complete(request: { messages: ChatMessage[]; tools?: ChatTool[] }): Promise<ChatCompletion> {
    this.requests++;
    const size = countPrompt(request.messages, request.tools ?? []);
    if (size > this.budget) this.violations.push(`an LLM request of ${size} tokens exceeded the budget of ${this.budget}`);
    if (!pairsIntact(request.messages)) this.violations.push("an LLM request separated a tool call from its result");

    const roll = this.rng.next();
    if (roll < 0.08) throw Object.assign(new Error("500 Internal Server Error"), { status: 500 });
    if (roll < 0.12) this.clock.advance(this.rng.int(1000, Math.floor(this.leaseMs * 1.5))); // a slow answer
    if (!request.tools?.length) return this.answer(this.text(this.rng.int(20, 120))); // a summary
    if (roll < 0.5) return this.toolCalls();
    return this.answer(this.text(this.rng.int(5, 400)));
  }

  private text(words: number): string {
    return Array.from({ length: words }, () => this.rng.pick(WORDS)).join(" ");
  }

  private toolCalls(): ChatCompletion {
    const calls = Array.from({ length: this.rng.int(1, 3) }, () => {
      const [name, args] = this.rng.pick<[string, unknown]>([
        ["list_instances", {}],
        ["get_instance", { id: "sim-1" }],
        ["schedule_next_check", { in_seconds: this.rng.int(1, 60), reason: "look again" }],
        ["notify_human", { title: `alert ${this.rng.int(1, 5)}`, body: this.text(30), severity: "warning" }],
        ["remember", { key: `k${this.rng.int(1, 4)}`, fact: this.text(this.rng.int(5, 200)) }],
        ["forget", { key: `k${this.rng.int(1, 4)}` }],
        ["restart_everything", {}],
        ["schedule_next_check", "{not json"],
      ]);
      return {
        id: `sim_call_${++this.callIds}`,
        type: "function" as const,
        function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
      };
    });
    return this.completion({ role: "assistant", content: null, tool_calls: calls, refusal: null });
  }

  private answer(content: string): ChatCompletion {
    return this.completion({ role: "assistant", content, refusal: null });
  }

  private completion(message: ChatCompletion["choices"][number]["message"]): ChatCompletion {
    return {
      id: `sim-${this.requests}`,
      object: "chat.completion",
      created: 0,
      model: this.model,
      choices: [{ index: 0, finish_reason: message.tool_calls ? "tool_calls" : "stop", logprobs: null, message }],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    };
  }
}
