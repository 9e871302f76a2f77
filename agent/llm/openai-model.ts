/**
 * The ChatModel over any OpenAI-compatible endpoint (OpenAI, a proxy, Ollama, vLLM) with the
 * official SDK: chat completions with tools, a per-request timeout, and the SDK's retries with
 * exponential backoff for connection errors, timeouts, 429 and 5xx. What still fails after the
 * retries is thrown to the run, which falls back to the rules policy.
 *
 * `tool_choice: "auto"` is sent unless LLM_TOOL_CHOICE is `none-sent` (for servers and proxies
 * that refuse the field; "auto" is the default when tools are given anyway). vLLM refuses "auto",
 * sent or defaulted, with a 400 unless started with --enable-auto-tool-choice --tool-call-parser
 * (vllm-project/vllm vllm/entrypoints/openai/serving_chat.py `create_chat_completion`). A 400
 * naming tool_choice is thrown as LlmMisconfigured: an operator has to change a flag.
 */
import OpenAI from "openai";
import { LlmMisconfigured, type ChatCompletion, type ChatMessage, type ChatModel, type ChatTool } from "./chat-model.ts";

export interface OpenAiSettings {
  apiKey: string;
  baseUrl?: string | undefined;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  toolChoice?: "auto" | "none-sent";
}

export class OpenAiChatModel implements ChatModel {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly sendToolChoice: boolean;

  constructor(private readonly settings: OpenAiSettings) {
    this.model = settings.model;
    this.sendToolChoice = (settings.toolChoice ?? "auto") === "auto";
    this.client = new OpenAI({
      apiKey: settings.apiKey,
      baseURL: settings.baseUrl,
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
    });
  }

  withModel(model: string): ChatModel {
    return model === this.model ? this : new OpenAiChatModel({ ...this.settings, model });
  }

  async complete(request: { messages: ChatMessage[]; tools?: ChatTool[]; signal?: AbortSignal }): Promise<ChatCompletion> {
    const tools = request.tools?.length ? request.tools : undefined;
    try {
      return await this.client.chat.completions.create(
        {
          model: this.model,
          messages: request.messages,
          ...(tools ? { tools, ...(this.sendToolChoice ? { tool_choice: "auto" as const } : {}) } : {}),
        },
        request.signal ? { signal: request.signal } : undefined,
      );
    } catch (err) {
      if (err instanceof OpenAI.BadRequestError && namesToolChoice(err)) {
        throw new LlmMisconfigured(`the server refused tool_choice (400: ${err.message.slice(0, 300)})`);
      }
      throw err;
    }
  }
}

function namesToolChoice(err: InstanceType<typeof OpenAI.BadRequestError>): boolean {
  return err.param === "tool_choice" || /tool[_ ]choice/i.test(err.message);
}
