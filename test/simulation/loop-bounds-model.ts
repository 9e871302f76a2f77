/**
 * The misbehaving LLM of the effects simulation, in process (like sim-model.ts, so a thousand
 * runs stay fast): on every run it re-schedules itself for one second later, starts every
 * exited instance and reboots every loading one it sees in the fleet snapshot, and asks again
 * to destroy an instance whatever a human said. After its tool results it answers in text.
 * While `down` it fails every call, so the rules policy decides (and the breaker opens).
 */
import type { ChatCompletion, ChatMessage, ChatModel } from "../../agent/llm/chat-model.ts";
import type { Rng } from "./rng.ts";

export class EffectsModel implements ChatModel {
  readonly model = "effects-sim";
  requests = 0;
  /** An outage: every call fails like an unreachable endpoint. */
  down = false;
  private calls = 0;

  constructor(
    private readonly rng: Rng,
    private readonly destroyTargets: readonly string[],
  ) {}

  async complete(request: { messages: ChatMessage[]; tools?: unknown[] }): Promise<ChatCompletion> {
    this.requests++;
    if (this.down) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
    const last = request.messages.at(-1);
    if (!request.tools?.length || last?.role === "tool") return this.answer({ role: "assistant", content: "done", refusal: null });
    const snapshot = request.messages
      .filter((m) => m.role === "system")
      .map((m) => String(m.content))
      .join("\n");
    const tools: { name: string; args: Record<string, unknown> }[] = [
      { name: "schedule_next_check", args: { in_seconds: 1, reason: "look again" } },
    ];
    for (const [, id, state] of snapshot.matchAll(/^- (\S+?)(?: "[^"]*")?: (\w+) since/gm)) {
      if (state === "exited") tools.push({ name: "start_instance", args: { instance_id: id, reason: "exited" } });
      if (state === "loading") tools.push({ name: "reboot_instance", args: { instance_id: id, reason: "loading" } });
    }
    tools.push({ name: "destroy_instance", args: { instance_id: this.rng.pick(this.destroyTargets), reason: "I want it gone" } });
    return this.answer({
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: tools.map((t) => ({
        id: `c${++this.calls}`,
        type: "function" as const,
        function: { name: t.name, arguments: JSON.stringify(t.args) },
      })),
    });
  }

  private answer(message: ChatCompletion["choices"][number]["message"]): ChatCompletion {
    return {
      id: `sim-${this.requests}`,
      object: "chat.completion",
      created: 0,
      model: this.model,
      choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop", logprobs: null }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    };
  }
}
