/**
 * The model-output cap (LLM_OUTPUT_MAX_CHARS, default 32 KiB): a reply's content, its refusal and
 * its tool calls' arguments are cut to the cap as soon as the completion arrives, before anything
 * counts tokens in them (gpt-tokenizer is quadratic on long runs of one character: an 8 MiB reply
 * froze the Node host for minutes) or stores them (llm_calls, messages, runs.reply). The cap on
 * arguments is shared by all of a message's calls, so many calls cannot add up past it either.
 * A cut reply ends with a marker saying so; a cut call is never parsed or run (agent/run-agent.ts
 * answers it with CUT_ARGUMENTS_RESULT), and the run records `runs.outputCut`.
 *
 * The calls themselves are bounded too (issue #37: a 256 KiB id stalled the host, 20,000 calls in
 * one message did): an id over MAX_TOOL_CALL_ID_CHARS (or not a string) is dropped, and the run
 * gives the call an id of its own; at most MAX_TOOL_CALLS_PER_REPLY calls are kept to run, plus one
 * that stands for the rest (its arguments dropped) and is answered with tooManyCallsResult, so
 * the model learns how many were not run. Both count as a cut (`runs.outputCut`).
 */
import type { ChatCompletion } from "./chat-model.ts";

export interface CappedCompletion {
  completion: ChatCompletion;
  /** Something in the completion was over the cap and was cut. */
  cut: boolean;
  /** Indexes (in message.tool_calls) of the calls whose arguments were cut. */
  cutCalls: ReadonlySet<number>;
  /** Calls of the message beyond MAX_TOOL_CALLS_PER_REPLY, not run (0: none). */
  droppedCalls: number;
}

/** The most tool calls of one message that run; the rest are refused. */
export const MAX_TOOL_CALLS_PER_REPLY = 32;
/** The longest tool-call id kept; a longer one is replaced by the run's own. */
export const MAX_TOOL_CALL_ID_CHARS = 64;

/** The result of the call that stands for the calls over MAX_TOOL_CALLS_PER_REPLY. */
export const tooManyCallsResult = (dropped: number) =>
  JSON.stringify({
    error: `not executed: your message had ${MAX_TOOL_CALLS_PER_REPLY + dropped} tool calls and at most ${MAX_TOOL_CALLS_PER_REPLY} run per message; this one and the ${dropped - 1} after it (${dropped} calls) were not run; send the ones still needed in a later message`,
  });

export const outputCutMarker = (max: number) => `\n\n[reply cut: it was over ${max} characters (LLM_OUTPUT_MAX_CHARS)]`;

/** The tool result a call whose arguments were cut gets instead of being run. */
export const cutArgumentsResult = (max: number) =>
  JSON.stringify({
    error: `not executed: the arguments were over ${max} characters (LLM_OUTPUT_MAX_CHARS), so they were not parsed; send a shorter call`,
  });

function capText(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  return { text: text.slice(0, max) + outputCutMarker(max), cut: true };
}

export function capCompletion(completion: ChatCompletion, max: number): CappedCompletion {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  if (!message) return { completion, cut: false, cutCalls: new Set(), droppedCalls: 0 };
  let cut = false;
  const content = typeof message.content === "string" ? capText(message.content, max) : null;
  const refusal = typeof message.refusal === "string" ? capText(message.refusal, max) : null;
  if (content?.cut || refusal?.cut) cut = true;
  const cutCalls = new Set<number>();
  let room = max;
  const all = message.tool_calls;
  const droppedCalls = all && all.length > MAX_TOOL_CALLS_PER_REPLY ? all.length - MAX_TOOL_CALLS_PER_REPLY : 0;
  if (droppedCalls) cut = true;
  const calls = (droppedCalls ? all!.slice(0, MAX_TOOL_CALLS_PER_REPLY + 1) : all)?.map((sent, i) => {
    // An id over the cap is dropped: the run gives the call its own (agent/run-agent.ts).
    const idOk = typeof sent.id === "string" && sent.id.length <= MAX_TOOL_CALL_ID_CHARS;
    if (!idOk) cut = true;
    const call = idOk ? sent : { ...sent, id: "" };
    if (call.type !== "function") return call;
    if (i === MAX_TOOL_CALLS_PER_REPLY) {
      const name = typeof call.function.name === "string" ? call.function.name.slice(0, 256) : call.function.name;
      return { ...call, function: { ...call.function, name, arguments: "{}" } };
    }
    const args = typeof call.function.arguments === "string" ? call.function.arguments : "";
    const name = typeof call.function.name === "string" ? call.function.name.slice(0, 256) : call.function.name;
    if (args.length <= room && name === call.function.name) {
      room -= args.length;
      return call;
    }
    cut = true;
    cutCalls.add(i);
    return { ...call, function: { ...call.function, name, arguments: "{}" } };
  });
  if (!cut) return { completion, cut, cutCalls, droppedCalls };
  const capped = {
    ...message,
    ...(content ? { content: content.text } : {}),
    ...(refusal ? { refusal: refusal.text } : {}),
    ...(calls ? { tool_calls: calls } : {}),
  };
  return {
    completion: { ...completion, choices: [{ ...choice, message: capped }, ...completion.choices.slice(1)] } as ChatCompletion,
    cut,
    cutCalls,
    droppedCalls,
  };
}
