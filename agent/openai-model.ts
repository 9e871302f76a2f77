/**
 * The ChatModel over any OpenAI-compatible endpoint (OpenAI, a proxy, Ollama, vLLM) with the
 * official SDK: chat completions with tools, a per-request timeout, and the SDK's retries with
 * exponential backoff for connection errors, timeouts, 429 and 5xx. What still fails after the
 * retries is thrown to the run, which falls back to the rules policy.
 */
import OpenAI from "openai";
import type { ChatCompletion, ChatMessage, ChatModel, ChatTool } from "./chat-model.ts";

export interface OpenAiSettings {
  apiKey: string;
  baseUrl?: string | undefined;
  model: string;
  timeoutMs: number;
  maxRetries: number;
}

export class OpenAiChatModel implements ChatModel {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(settings: OpenAiSettings) {
    this.model = settings.model;
    this.client = new OpenAI({
      apiKey: settings.apiKey,
      baseURL: settings.baseUrl,
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
    });
  }

  async complete(request: { messages: ChatMessage[]; tools?: ChatTool[]; signal?: AbortSignal }): Promise<ChatCompletion> {
    const tools = request.tools?.length ? request.tools : undefined;
    return this.client.chat.completions.create(
      { model: this.model, messages: request.messages, ...(tools ? { tools, tool_choice: "auto" as const } : {}) },
      request.signal ? { signal: request.signal } : undefined,
    );
  }
}
