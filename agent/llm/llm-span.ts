/**
 * The span of one LLM call (agent/llm/llm-call.ts), as the OpenTelemetry GenAI semantic
 * conventions describe an inference span (open-telemetry/semantic-conventions
 * docs/gen-ai/gen-ai-spans.md, commit a064dcca28053f4406d5dc65895e89c523171ca4): named
 * `chat <model>`, kind client, with the operation, provider, request and response models, token
 * usage and finish reasons. The messages themselves are added only when the operator opted in
 * (OTEL_CAPTURE_CONTENT=true), as the `gen_ai.input.messages` and `gen_ai.output.messages`
 * attributes in the conventions' JSON shape (docs/gen-ai/gen-ai-input-messages.json and
 * gen-ai-output-messages.json, commit 32e44cbf6b596cb7ce7ac0931a80bdc9a376e100): they may hold
 * fleet data and operators' words.
 */
import type { RunFence } from "../../pipeline/index.ts";
import { noopSpan, type Span, type Tracer } from "../../runtime/trace.ts";
import type { ChatCompletion, ChatMessage } from "./chat-model.ts";

/** The API the endpoint speaks (an OpenAI-compatible one: OpenAI, vLLM, Ollama, a proxy). */
const PROVIDER = "openai";

export function startLlmSpan(
  tracer: Tracer | undefined,
  run: RunFence | null,
  model: string,
  purpose: string,
  messages: readonly ChatMessage[],
): Span {
  if (!tracer || !run) return noopSpan;
  const span = tracer.startChild(run, `chat ${model}`, "client", {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": PROVIDER,
    "gen_ai.system": PROVIDER,
    "gen_ai.request.model": model,
    "fleetwarden.llm.purpose": purpose,
  });
  if (tracer.captureContent) span.setAttributes({ "gen_ai.input.messages": JSON.stringify(messages.map(inputMessage)) });
  return span;
}

/** Ends the span with what the model answered (after the output cap, as the run saw it). */
export function endLlmSpan(tracer: Tracer | undefined, span: Span, completion: ChatCompletion): void {
  const choices = completion.choices ?? [];
  span.setAttributes({
    "gen_ai.response.model": completion.model,
    "gen_ai.response.id": completion.id,
    "gen_ai.usage.input_tokens": completion.usage?.prompt_tokens ?? null,
    "gen_ai.usage.output_tokens": completion.usage?.completion_tokens ?? null,
    "gen_ai.response.finish_reasons": choices.map((c) => String(c.finish_reason)),
  });
  if (tracer?.captureContent)
    span.setAttributes({
      "gen_ai.output.messages": JSON.stringify(
        choices.map((c) => ({ ...inputMessage(c.message as ChatMessage), finish_reason: String(c.finish_reason) })),
      ),
    });
  span.end();
}

/** A failed call: the conventions' `error.type` and an error status. */
export function failLlmSpan(span: Span, err: unknown): void {
  span.setAttributes({ "error.type": err instanceof Error ? err.name : "Error" });
  span.end(err instanceof Error ? err.message : String(err));
}

type Part =
  | { type: "text"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_call_response"; id: string; response: string };

/** A chat message as the conventions' message: a role and its parts. */
function inputMessage(message: ChatMessage): { role: string; parts: Part[] } {
  const parts: Part[] = [];
  const content = message.content;
  const text =
    typeof content === "string" ? content : Array.isArray(content) ? content.map((p) => ("text" in p ? p.text : "")).join("") : "";
  if (message.role === "tool") parts.push({ type: "tool_call_response", id: message.tool_call_id, response: text });
  else if (text) parts.push({ type: "text", content: text });
  if (message.role === "assistant")
    for (const call of message.tool_calls ?? [])
      if (call.type === "function")
        parts.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
  return { role: message.role, parts };
}
