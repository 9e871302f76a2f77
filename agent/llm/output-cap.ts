/**
 * The model-output cap (LLM_OUTPUT_MAX_CHARS, default 32 KiB): a reply's content, its refusal and
 * its tool calls' arguments are cut to the cap as soon as the completion arrives, before anything
 * counts tokens in them (gpt-tokenizer is quadratic on long runs of one character: an 8 MiB reply
 * froze the Node host for minutes) or stores them (llm_calls, messages, runs.reply). The cap on
 * arguments is shared by all of a message's calls, so many calls cannot add up past it either.
 * A cut reply ends with a marker saying so; a cut call is never parsed or run (agent/run-agent.ts
 * answers it with CUT_ARGUMENTS_RESULT), and the run records `runs.outputCut`.
 */
import type { ChatCompletion } from "./chat-model.ts";

export interface CappedCompletion {
  completion: ChatCompletion;
  /** Something in the completion was over the cap and was cut. */
  cut: boolean;
  /** Indexes (in message.tool_calls) of the calls whose arguments were cut. */
  cutCalls: ReadonlySet<number>;
}

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
  if (!message) return { completion, cut: false, cutCalls: new Set() };
  let cut = false;
  const content = typeof message.content === "string" ? capText(message.content, max) : null;
  const refusal = typeof message.refusal === "string" ? capText(message.refusal, max) : null;
  if (content?.cut || refusal?.cut) cut = true;
  const cutCalls = new Set<number>();
  let room = max;
  const calls = message.tool_calls?.map((call, i) => {
    if (call.type !== "function") return call;
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
  if (!cut) return { completion, cut, cutCalls };
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
  };
}
