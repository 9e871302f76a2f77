/**
 * The agent's run step: build the prompt, fit it to the budget, call the LLM, execute the tools
 * it asks for, and loop until it answers without tool calls — bounded by AGENT_MAX_ITERATIONS and
 * the run's deadline. With no LLM configured, an open circuit breaker, or an LLM that fails
 * (after the SDK's retries), keeps sending malformed tool calls or cannot be fitted, the rules
 * policy decides instead (decider `rules`); the run still finishes and releases its lease.
 *
 * A message the output limit cut (finish_reason `length`) marks the run `truncated`: a cut reply
 * is shown with a marker saying so (the run does not ask the model to continue it), and a cut
 * message's tool calls are not run — each is answered with an error the model can act on, and the
 * round counts as malformed. At most MAX_TOOL_CALLS_PER_REPLY calls of a message run (one more is
 * answered with how many were not), and a tool-call id over MAX_TOOL_CALL_ID_CHARS is replaced by
 * the run's own. A reply or tool argument over LLM_OUTPUT_MAX_CHARS was cut on arrival
 * (agent/llm/output-cap.ts): the reply says so, such a call is answered with an error, and the run
 * records `outputCut`. A refusal is the reply, shown as one, and noted in the run's error. A message
 * the provider's content filter stopped (finish_reason `content_filter`) ends the run: its text
 * (if any) is the reply with a note saying the filter stopped it, its tool calls are not run, and
 * the run's error records it.
 *
 * Every write the run makes is fenced by its lease (pipeline/run-fence.ts): the lease is renewed
 * once per iteration, in the batch that keeps the LLM call's transcript (agent/llm/llm-call.ts), and
 * checked before the answer's tools run; an answer that arrives after the run's deadline is not
 * acted on, and a lost fence (FenceLostError) ends the step, which the pipeline records.
 *
 * The verdict is by code: the run is a no-op unless it consumed a human message or a mutating
 * tool actually executed. The run's turns are returned with its outcome; the pipeline stores them
 * only for a run that is not a no-op, in the batch that records it succeeded.
 * Only database faults escape (the pipeline then records the run failed and retries its work).
 */
import type { RunContext, RunOutcome, RunStep } from "../pipeline/index.ts";
import type { AgentDeps } from "./deps.ts";
import { Breaker, DEFAULT_BREAKER, llmBreakerName, type BreakerPolicy } from "./llm/breaker.ts";
import { assemble, BudgetError, fitPrompt, type FitReport } from "./prompt/budget.ts";
import type { ChatMessage } from "./llm/chat-model.ts";
import { createSummarizer } from "./prompt/compaction.ts";
import { toConversationTurns } from "./prompt/conversation.ts";
import { LlmCaller, LlmFault } from "./llm/llm-call.ts";
import { completionEnding, CUT_TOOL_CALL_RESULT, cutReply, FILTERED_ERROR, filteredReply, refusalReply } from "./llm/completion-ending.ts";
import { iso } from "../runtime/time.ts";
import { buildPromptDraft, PROMPT_SHARES } from "./prompt/prompt.ts";
import { readPromptRows } from "./prompt/prompt-reads.ts";
import { decideByRules } from "./rules/rules-policy.ts";
import { withStorableArguments } from "./llm/tool-call-args.ts";
import { cutArgumentsResult, MAX_TOOL_CALLS_PER_REPLY, tooManyCallsResult } from "./llm/output-cap.ts";
import { chatToolsFor, runToolCall } from "./tools/index.ts";
import { countPrompt, messageTexts, precount } from "./prompt/tokens.ts";
import { makeTurn } from "./prompt/turns.ts";

/** Rounds in a row where every tool call was malformed before the LLM counts as failing. */
const MAX_MALFORMED_ROUNDS = 2;

export interface AgentRunOptions {
  breaker?: BreakerPolicy;
}

export function createAgentRunStep(options: AgentRunOptions = {}): RunStep<AgentDeps> {
  return (context) => runAgent(context, options.breaker ?? DEFAULT_BREAKER);
}

export const agentRunStep: RunStep<AgentDeps> = createAgentRunStep();

interface Progress {
  mutated: boolean;
  /** This run's messages in order, stored only if the run is not a no-op. */
  turns: ChatMessage[];
  calls: FitReport[];
  errors: string[];
  /** A message of this run was cut by the model's output limit. */
  truncated: boolean;
}

async function runAgent(context: RunContext<AgentDeps>, breakerPolicy: BreakerPolicy): Promise<RunOutcome> {
  const { deps } = context;
  // The prompt's rows and the breaker's in one batch (agent/prompt/prompt-reads.ts).
  const breakerName = deps.llm ? llmBreakerName(context.agentId, deps.llm.model) : null;
  const read = await readPromptRows(deps, context, breakerName);
  const draft = await buildPromptDraft(deps, context, read);
  const progress: Progress = { mutated: false, turns: [draft.input], calls: [], errors: [], truncated: false };
  if (!deps.llm || breakerName === null) return decideWithRules(context, progress, null, "no LLM is configured");

  const breaker = new Breaker(deps, breakerName, breakerPolicy);
  const breakerState = read.breaker;
  if (breakerState.openUntil !== null && breakerState.openUntil > deps.clock.now()) {
    return decideWithRules(
      context,
      progress,
      null,
      `the LLM circuit breaker is open until ${iso(breakerState.openUntil)} (this agent's model ${deps.llm.model})`,
    );
  }
  const llm = new LlmCaller(deps, deps.llm, breaker, context.deadline, breakerState.failures, context.fence);
  const budget = deps.config.contextBudgetTokens;
  const summarize = createSummarizer({
    deps,
    agentId: context.agentId,
    epoch: context.sessionEpoch,
    budget,
    summaryCap: Math.floor(budget * PROMPT_SHARES.summary),
    complete: async (messages) => {
      await precount(messageTexts(messages), deps.tokenCounter);
      const completion = await llm.complete(messages, [], countPrompt(messages), "summary");
      const { refusal, filtered } = completionEnding(completion);
      if (refusal !== null) throw new Error(`the model refused to summarise: ${refusal.slice(0, 200)}`);
      if (filtered) throw new Error("the LLM provider's content filter stopped the summary");
      return completion.choices[0]!.message.content ?? "";
    },
  });

  let final: string | null = null;
  let malformedRounds = 0;
  // Only the tools the provider can carry out are offered (agent/tools/index.ts chatToolsFor).
  const tools = chatToolsFor(deps.provider);
  try {
    for (let iteration = 1; final === null; iteration++) {
      if (iteration > deps.config.agentMaxIterations) {
        progress.errors.push(`stopped after ${deps.config.agentMaxIterations} LLM calls without a final answer`);
        break;
      }
      // Large texts are tokenized off the event loop where the host can (fitting then finds their
      // counts); on a host without a counter (the Worker) there is nothing to gather.
      if (deps.tokenCounter) await precount([...messageTexts(assemble(draft)), JSON.stringify(tools)], deps.tokenCounter);
      const fitted = await fitPrompt(draft, tools, budget, summarize);
      progress.calls.push(fitted.report);
      if (fitted.report.summaryError)
        progress.errors.push(`compaction could not summarise (${fitted.report.summaryError}); trimmed instead`);
      const completion = await llm.complete(fitted.messages, tools, fitted.tokens);
      const message = completion.choices[0]!.message;
      const ending = completionEnding(completion);
      if (ending.cut) progress.truncated = true;
      const calls = (message.tool_calls ?? []).map((call, i) => ({ ...call, id: call.id || `call_${iteration}_${i}` }));
      if (ending.filtered && ending.refusal === null) {
        progress.errors.push(calls.length ? `${FILTERED_ERROR}; its ${calls.length} tool call(s) were not executed` : FILTERED_ERROR);
        final = filteredReply(message.content);
        progress.turns.push({ role: "assistant", content: final });
        break;
      }
      if (ending.refusal !== null || calls.length === 0) {
        if (ending.refusal !== null) progress.errors.push(`the model refused: ${ending.refusal.slice(0, 300)}`);
        final = ending.refusal !== null ? refusalReply(ending.refusal) : ending.cut ? cutReply(message.content) : (message.content ?? "");
        progress.turns.push({ role: "assistant", content: final });
        break;
      }
      if (llm.droppedCalls > 0)
        progress.errors.push(`${llm.droppedCalls} tool call(s) over ${MAX_TOOL_CALLS_PER_REPLY} in one message were not run`);
      if (deps.clock.now() >= context.deadline) {
        progress.errors.push(`the LLM answered after the run's deadline; its ${calls.length} tool call(s) were not executed`);
        break;
      }
      llm.leaseRenewed();
      // History keeps arguments every strict server accepts; the tools below get what was sent.
      const assistant: ChatMessage = { role: "assistant", content: message.content ?? null, tool_calls: calls.map(withStorableArguments) };
      const results: ChatMessage[] = [];
      let valid = 0;
      for (const [index, call] of calls.entries()) {
        // A cut message may end inside a call's arguments or before its last call: none of it runs.
        // Arguments over the output cap were never kept, so that call cannot run either.
        const outcome = ending.cut
          ? { content: CUT_TOOL_CALL_RESULT, mutated: false, invalid: true }
          : index >= MAX_TOOL_CALLS_PER_REPLY
            ? { content: tooManyCallsResult(llm.droppedCalls), mutated: false, invalid: true }
            : llm.cutCalls.has(index)
              ? { content: cutArgumentsResult(deps.config.llmOutputMaxChars), mutated: false, invalid: true }
              : call.type === "function"
                ? await runToolCall(
                    { deps, agentId: context.agentId, runId: context.runId, toolCallId: call.id, fence: context.fence, answering: context },
                    call.function.name,
                    call.function.arguments,
                  )
                : { content: JSON.stringify({ error: "only function tools exist" }), mutated: false, invalid: true };
        if (outcome.mutated) progress.mutated = true;
        if (!outcome.invalid) valid++;
        results.push({ role: "tool", tool_call_id: call.id, content: outcome.content });
      }
      draft.current.push(makeTurn([assistant, ...results]));
      progress.turns.push(assistant, ...results);
      malformedRounds = valid === 0 ? malformedRounds + 1 : 0;
      if (malformedRounds >= MAX_MALFORMED_ROUNDS)
        throw new LlmFault(`the LLM sent only malformed tool calls ${malformedRounds} times in a row`);
    }
  } catch (err) {
    if (!(err instanceof LlmFault || err instanceof BudgetError)) throw err;
    return decideWithRules(context, progress, llm, err.message);
  }
  return finish(context, progress, llm, { decider: "llm", reply: final });
}

/** The rules policy decides the rest of the run; what the LLM already did stays recorded. */
async function decideWithRules(
  context: RunContext<AgentDeps>,
  progress: Progress,
  llm: LlmCaller | null,
  why: string,
): Promise<RunOutcome> {
  const decision = await decideByRules(context.deps, context, why);
  if (decision.mutated) progress.mutated = true;
  progress.errors.push(`rules policy decided: ${why}`);
  const note = decision.reply ?? `[rules policy, because ${why}] ${decision.decisions.join("; ") || "no action needed"}`;
  progress.turns.push({ role: "assistant", content: note });
  return finish(context, progress, llm, { decider: "rules", reply: decision.reply });
}

async function finish(
  context: RunContext<AgentDeps>,
  progress: Progress,
  llm: LlmCaller | null,
  result: { decider: "llm" | "rules"; reply: string | null },
): Promise<RunOutcome> {
  const human = context.events.some((e) => e.source === "human");
  // The turns are counted as they are stored: long ones off the event loop where the host can.
  await precount(messageTexts(progress.turns), context.deps.tokenCounter);
  return {
    decider: result.decider,
    mutated: progress.mutated,
    // An empty answer is never shown as a reply: the human sees that there was none.
    reply: human ? result.reply || "(the agent finished without a reply)" : null,
    promptTokens: llm?.promptTokens ?? 0,
    completionTokens: llm?.completionTokens ?? 0,
    contextTokens: llm?.largestRequest ?? 0,
    compaction: llm ? { budget: context.deps.config.contextBudgetTokens, calls: progress.calls } : null,
    truncated: progress.truncated,
    outputCut: llm?.outputCut ?? false,
    ...(progress.errors.length ? { error: progress.errors.join("; ") } : {}),
    turns: toConversationTurns(progress.turns),
  };
}
