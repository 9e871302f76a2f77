/**
 * What the run needs from an LLM: one chat completion with tools. The OpenAI-compatible client
 * implements it; tests point that client at a scripted server on loopback. A server that refuses
 * the request's shape (a 400 naming tool_choice) is an LlmMisconfigured: retrying cannot help,
 * an operator has to change a flag.
 */
import type OpenAI from "openai";

export type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.ChatCompletionTool;
export type ChatCompletion = OpenAI.Chat.ChatCompletion;

export interface ChatModel {
  readonly model: string;
  complete(request: { messages: ChatMessage[]; tools?: ChatTool[]; signal?: AbortSignal }): Promise<ChatCompletion>;
  /** The same endpoint asking for another model (an agent's `model` setting); absent: fixed model. */
  withModel?(model: string): ChatModel;
}

export class LlmMisconfigured extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LlmMisconfigured";
  }
}
