/**
 * The effects simulation's LLM: an in-process ChatModel that misbehaves the way issue 9 found
 * models do — it always re-schedules a check a second ahead, re-requests actions (reboots, a
 * destroy that needs approval) on every call, notifies and remembers, and sometimes answers only
 * after the run's lease has run out (it advances the fake clock while "thinking").
 */
import type { ChatCompletion, ChatModel } from "../../agent/llm/chat-model.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import type { Rng } from "./rng.ts";

export class MisbehavingLlm implements ChatModel {
  readonly model = "misbehaving";
  calls = 0;
  lateAnswers = 0;

  constructor(
    private readonly rng: Rng,
    private readonly clock: FakeClock,
    private readonly leaseMs: number,
    private readonly instances: readonly string[],
  ) {}

  /** Tool calls in a seeded order, so a stalled action can come before any other effect. */
  private shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.rng.int(0, i);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  async complete(): Promise<ChatCompletion> {
    this.calls++;
    if (this.rng.chance(0.15)) {
      this.lateAnswers++;
      this.clock.advance(this.leaseMs + this.rng.int(1, 5000));
    }
    const id = (name: string) => `${name}_${this.calls}_${this.rng.int(0, 1e6)}`;
    const call = (name: string, args: Record<string, unknown>) => ({
      id: id(name),
      type: "function" as const,
      function: { name, arguments: JSON.stringify(args) },
    });
    const target = this.rng.pick(this.instances);
    const other = this.rng.pick(this.instances);
    const toolCalls = this.rng.chance(0.2)
      ? []
      : this.shuffle([
          call("schedule_next_check", { in_seconds: 1, reason: "look again right away" }),
          call("reboot_instance", { instance_id: target, reason: "it might be stuck" }),
          ...(other !== target && this.rng.chance(0.5) ? [call("reboot_instance", { instance_id: other, reason: "this one too" })] : []),
          ...(this.rng.chance(0.3) ? [call("destroy_instance", { instance_id: target, reason: "replace it" })] : []),
          ...(this.rng.chance(0.3) ? [call("notify_human", { title: `About ${target}`, body: "still watching", severity: "info" })] : []),
          ...(this.rng.chance(0.2) ? [call("remember", { key: `seen-${target}`, fact: `looked at ${this.clock.now()}` })] : []),
        ]);
    return {
      id: `c${this.calls}`,
      object: "chat.completion",
      created: 0,
      model: this.model,
      choices: [
        {
          index: 0,
          finish_reason: toolCalls.length ? "tool_calls" : "stop",
          logprobs: null,
          message: {
            role: "assistant",
            content: toolCalls.length ? null : "Nothing more to do.",
            refusal: null,
            ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          },
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    } as ChatCompletion;
  }
}
