/**
 * One run's access to the LLM: every call (tool loop and summariser) goes through here, so each
 * is bounded by the run's deadline, passes the circuit breaker, and adds its usage to the run's
 * totals. Whatever goes wrong with the endpoint becomes an LlmFault, which the run answers by
 * handing the decision to the rules policy; only database faults propagate. A server that
 * refuses the request as misconfigured is said so in the fault (and so in the run's error) and
 * kept on the breaker row, where /healthz reads it.
 *
 * Every call made is kept (llm_calls, agent/llm/transcripts.ts): its request (messages, tools) and
 * the response as received, or {error}, numbered in the order the run made them. One INSERT per
 * call, right after the answer, so a run that crashes later still leaves what it was told. It is
 * not fenced: a transcript is a record, not an effect, and an answer that came too late to be
 * acted on (the lease ran out meanwhile) is exactly what a human reading the run wants to see.
 * Every answer is cut to LLM_OUTPUT_MAX_CHARS first (agent/llm/output-cap.ts), before it is kept or
 * counted: `outputCut` says one was, `cutCalls` which calls of the last answer lost their arguments.
 * Each call is a span of the run's trace when traces are exported (agent/llm/llm-span.ts).
 */
import type { AgentDeps } from "../deps.ts";
import type { Breaker } from "./breaker.ts";
import { leaseRenewal, type RunFence } from "../../pipeline/index.ts";
import { recordLlmCall, type LlmCallPurpose } from "./transcripts.ts";
import { capCompletion } from "./output-cap.ts";
import { endLlmSpan, failLlmSpan, startLlmSpan } from "./llm-span.ts";
import { LlmMisconfigured, type ChatCompletion, type ChatMessage, type ChatModel, type ChatTool } from "./chat-model.ts";

/** What an operator can change when the server refuses tool_choice. */
export const TOOL_CHOICE_HINT =
  "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser for the model>; a server that refuses the tool_choice field itself needs LLM_TOOL_CHOICE=none-sent";

export class LlmFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LlmFault";
  }
}

export class LlmCaller {
  promptTokens = 0;
  completionTokens = 0;
  calls = 0;
  /** The largest request sent, in tokens as counted by agent/prompt/tokens.ts. */
  largestRequest = 0;
  /** An answer of this run was over the output cap and was cut. */
  outputCut = false;
  /** The tool calls (by index) of the last answer whose arguments were over the cap. */
  cutCalls: ReadonlySet<number> = new Set();
  /** The calls of the last answer over MAX_TOOL_CALLS_PER_REPLY, not run (agent/llm/output-cap.ts). */
  droppedCalls = 0;

  constructor(
    private readonly deps: Pick<AgentDeps, "clock" | "db" | "config" | "tracer">,
    private readonly model: ChatModel,
    private readonly breaker: Breaker,
    private readonly deadline: number,
    private breakerFailures: number,
    /** The run whose calls are kept, its lease renewed with each; null: calls are not kept. */
    private readonly run: RunFence | null = null,
  ) {}

  /** Settles the lease renewal sent with the last call's transcript (none before the first call). */
  private settleRenewal: () => void = () => {};

  /**
   * Throws FenceLostError when the renewal sent with the last answer's transcript found the run
   * no longer holding its lease (the tool loop asks before running the answer's tools).
   */
  leaseRenewed(): void {
    this.settleRenewal();
  }

  async complete(
    messages: ChatMessage[],
    tools: readonly ChatTool[],
    requestTokens: number,
    purpose: LlmCallPurpose = "chat",
  ): Promise<ChatCompletion> {
    const remaining = this.deadline - this.deps.clock.now();
    if (remaining <= 0) throw new LlmFault("the run's deadline passed before the LLM answered");
    this.calls++;
    this.largestRequest = Math.max(this.largestRequest, requestTokens);
    // The transcript and the run's one lease renewal of this iteration share a round trip.
    const keep = async (response: unknown) => {
      if (!this.run) return;
      const renewal = leaseRenewal(this.deps, this.run);
      const rows = await recordLlmCall(
        this.deps,
        this.run,
        { seq: this.calls, purpose, model: this.model.model, request: { messages, tools }, response },
        renewal.statement,
      );
      this.settleRenewal = () => renewal.settle(rows ?? []);
    };
    let completion: ChatCompletion;
    // The call's span, a child of the run's (agent/llm/llm-span.ts); nothing when traces are off.
    const span = startLlmSpan(this.deps.tracer, this.run, this.model.model, purpose, messages);
    try {
      completion = await this.model.complete({
        messages,
        ...(tools.length ? { tools: [...tools] } : {}),
        signal: AbortSignal.timeout(remaining),
      });
    } catch (err) {
      failLlmSpan(span, err);
      await keep({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
      this.breakerFailures++;
      if (err instanceof LlmMisconfigured) {
        const reason = `${err.message}; ${TOOL_CHOICE_HINT}`;
        await this.breaker.recordMisconfigured(reason);
        throw new LlmFault(`the LLM server is misconfigured: ${reason}`);
      }
      await this.breaker.recordFailure();
      throw new LlmFault(`the LLM failed after retries: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    }
    const capped = capCompletion(completion, this.deps.config.llmOutputMaxChars);
    completion = capped.completion;
    this.cutCalls = capped.cutCalls;
    this.droppedCalls = capped.droppedCalls;
    if (capped.cut) this.outputCut = true;
    endLlmSpan(this.deps.tracer, span, completion);
    await keep(completion);
    if (this.breakerFailures > 0) {
      await this.breaker.recordSuccess();
      this.breakerFailures = 0;
    }
    this.promptTokens += completion.usage?.prompt_tokens ?? 0;
    this.completionTokens += completion.usage?.completion_tokens ?? 0;
    if (!completion.choices?.[0]?.message) throw new LlmFault("the LLM answered without a message (malformed response)");
    return completion;
  }
}
