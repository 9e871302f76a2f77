/**
 * How a chat completion ended, read as OpenAI documents it (openai/openai-node 7b7d6ca7,
 * src/resources/chat/completions/completions.ts): `ChatCompletion.Choice.finish_reason` is
 * `length` when the output limit stopped the model mid-message, and
 * `ChatCompletionMessage.refusal` holds the model's refusal (with `content` null). The run uses
 * this so that a cut reply is never shown as if it were complete, a tool call from a cut message
 * is never executed (its arguments may stop mid-JSON, or a call may be missing), and a refusal
 * reads as a refusal rather than an empty reply. `content_filter` ("content was omitted due to a
 * flag from our content filters", same file) ends the run's answer: what arrived is kept with a
 * note that the provider's filter stopped it (never an empty reply), and the message's tool calls
 * are not run (the filter may have cut them as well).
 */
import type { ChatCompletion } from "./chat-model.ts";

/** Appended to a reply the output limit cut, so the human (and later runs) see that it was. */
export const REPLY_CUT_MARKER = "[reply cut: the model reached its output limit]";

/** What a cut message's tool calls are answered with instead of being run. */
export const CUT_TOOL_CALL_RESULT = JSON.stringify({
  error:
    "not executed: your message was cut at the output limit (finish_reason length), so this call may be incomplete; send it again, shorter",
});

export interface CompletionEnding {
  /** finish_reason `length`: the message stops where the output limit was reached. */
  cut: boolean;
  /** The refusal text when the model refused; null otherwise. */
  refusal: string | null;
  /** finish_reason `content_filter`: the provider's content filter stopped the message. */
  filtered: boolean;
}

export function completionEnding(completion: ChatCompletion): CompletionEnding {
  const choice = completion.choices[0]!;
  const refusal = typeof choice.message.refusal === "string" ? choice.message.refusal.trim() : "";
  return {
    cut: choice.finish_reason === "length",
    refusal: refusal || null,
    filtered: choice.finish_reason === "content_filter",
  };
}

/** The reply from a cut message: whatever arrived, then the marker. */
export function cutReply(content: string | null): string {
  const arrived = (content ?? "").trimEnd();
  return arrived ? `${arrived}\n\n${REPLY_CUT_MARKER}` : REPLY_CUT_MARKER;
}

export function refusalReply(refusal: string): string {
  return `The model refused: ${refusal}`;
}

/** The reply's note when the provider's content filter stopped the answer. */
export const FILTERED_REPLY = "[no complete answer: the LLM provider's content filter stopped the answer (finish_reason content_filter)]";

/** What the run's error records when the provider's content filter stopped an answer. */
export const FILTERED_ERROR = "the LLM provider's content filter stopped the answer (finish_reason content_filter)";

/** The reply from a filtered message: whatever arrived, then the note. */
export function filteredReply(content: string | null): string {
  const arrived = (content ?? "").trimEnd();
  return arrived ? `${arrived}\n\n${FILTERED_REPLY}` : FILTERED_REPLY;
}
