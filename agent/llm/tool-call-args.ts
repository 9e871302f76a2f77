/**
 * Tool-call arguments as they are stored and sent back in history: always the JSON text of an
 * object. Strict servers parse every earlier call's arguments on every request (Ollama
 * openai/openai.go `FromCompletionToolCall`: json.Unmarshal into a map, else 400 "invalid tool
 * call arguments"; vLLM vllm/entrypoints/chat_utils.py `_postprocess_messages`: json.loads), so a
 * call stored exactly as a model sent it (`""`, `{"a":`, `[1]`) would fail every later run. The
 * model itself still got the error result for what it really sent (agent/tools/index.ts); only
 * the stored copy becomes `{}`.
 */
import type { ChatMessage } from "./chat-model.ts";

type ToolCall = NonNullable<Extract<ChatMessage, { role: "assistant" }>["tool_calls"]>[number];

export function storableArguments(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "") return "{}";
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? JSON.stringify(parsed) : "{}";
  } catch {
    return "{}";
  }
}

/** The call with arguments every strict server accepts in history. */
export function withStorableArguments<T extends ToolCall>(call: T): T {
  if (call.type !== "function") return call;
  return { ...call, function: { ...call.function, arguments: storableArguments(call.function.arguments) } };
}
