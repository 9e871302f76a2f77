/**
 * A scripted OpenAI-compatible server on loopback (real HTTP, so the real SDK is exercised):
 * POST /v1/chat/completions answers from a queue of scripted responses — text, tool calls (with
 * any argument string, malformed included), error statuses, slow answers for timeouts, raw
 * bodies — and records every request body so tests can assert what was sent. Requests without
 * tools (the summariser's) can be answered by a separate handler.
 *
 * Before answering it checks the request the way strict servers do, and refuses with their 400
 * (without using up a scripted response):
 * - history (on unless `strictHistory` is false): every assistant tool call's `arguments` must be
 *   the JSON text of an object — Ollama openai/openai.go `FromCompletionToolCall` (json.Unmarshal
 *   into a map, else 400 "invalid tool call arguments"), vLLM vllm/entrypoints/chat_utils.py
 *   `_postprocess_messages` (json.loads); and every tool message must answer a tool call of the
 *   assistant message before it (OpenAI: "messages with role 'tool' must be a response to a
 *   preceding message with 'tool_calls'").
 * - `autoToolChoice = false` acts like vLLM started without --enable-auto-tool-choice
 *   --tool-call-parser (https://docs.vllm.ai/en/stable/features/tool_calling/): a request with
 *   tools and `tool_choice` "auto" — or no `tool_choice` at all, which vLLM defaults to "auto"
 *   when tools are given (vllm/entrypoints/openai/protocol.py `check_tool_usage`) — is a 400
 *   `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`
 *   (vllm-project/vllm 003fe593 vllm/entrypoints/openai/serving_chat.py `create_chat_completion`).
 * - `toolChoiceField = false` acts like a server or proxy that does not accept the `tool_choice`
 *   field at all: sending it is a 400 naming it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptedCall = { name: string; arguments: string | Record<string, unknown>; id?: string };

export type Scripted =
  | { text: string; usage?: { prompt: number; completion: number } }
  | { tools: ScriptedCall[]; text?: string }
  | { status: number; message?: string }
  | { delayMs: number; then: Scripted }
  | { raw: unknown };

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; parameters: unknown } }[];
  tool_choice?: unknown;
}

export class ScriptedLlm {
  readonly requests: ChatRequestBody[] = [];
  private readonly queue: Scripted[] = [];
  private server: Server | null = null;
  private callCounter = 0;
  /** Answers requests that carry no tools (the summariser); falls back to the queue when unset. */
  onSummary: ((body: ChatRequestBody) => Scripted) | null = null;
  /** Check the history the way Ollama and vLLM do (see the header). */
  strictHistory = true;
  /** False: act like vLLM without --enable-auto-tool-choice. */
  autoToolChoice = true;
  /** False: refuse any request that carries `tool_choice`. */
  toolChoiceField = true;
  /** Why each refused request was refused. */
  readonly refused: string[] = [];
  url = "";

  push(...responses: Scripted[]): this {
    this.queue.push(...responses);
    return this;
  }

  get pending(): number {
    return this.queue.length;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequestBody;
    this.requests.push(body);
    const refusal = this.refusal(body);
    if (refusal) {
      this.refused.push(refusal.error.message);
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(refusal));
      return;
    }
    const scripted = !body.tools && this.onSummary ? this.onSummary(body) : this.queue.shift();
    await this.answer(res, body, scripted ?? { status: 500, message: "scripted LLM: no response queued" });
  }

  private refusal(body: ChatRequestBody): { error: { message: string; type: string; param: string | null } } | null {
    if (!this.toolChoiceField && body.tool_choice !== undefined) {
      return { error: { message: "Unrecognized request argument supplied: tool_choice", type: "invalid_request_error", param: "tool_choice" } };
    }
    const choice = body.tool_choice ?? (body.tools?.length ? "auto" : undefined);
    if (!this.autoToolChoice && choice === "auto") {
      return { error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: "BadRequestError", param: null } };
    }
    if (!this.strictHistory) return null;
    let open = new Set<string>();
    for (const m of body.messages) {
      if (m.role === "tool") {
        if (!open.delete(m.tool_call_id ?? "")) {
          return { error: { message: "messages with role 'tool' must be a response to a preceding message with 'tool_calls'", type: "invalid_request_error", param: "messages" } };
        }
        continue;
      }
      open = new Set((m.tool_calls ?? []).map((c) => c.id));
      for (const call of m.tool_calls ?? []) {
        if (!isJsonObjectText(call.function.arguments)) {
          return { error: { message: `invalid tool call arguments: ${JSON.stringify(call.function.arguments)}`, type: "invalid_request_error", param: null } };
        }
      }
    }
    return null;
  }

  private async answer(res: ServerResponse, body: ChatRequestBody, scripted: Scripted): Promise<void> {
    if ("delayMs" in scripted) {
      await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
      if (res.destroyed) return;
      return this.answer(res, body, scripted.then);
    }
    if ("status" in scripted) {
      // retry-after-ms keeps the SDK's backoff short in tests; the retries themselves still happen.
      res.writeHead(scripted.status, { "content-type": "application/json", "retry-after-ms": "5" });
      res.end(JSON.stringify({ error: { message: scripted.message ?? "scripted failure", type: "server_error" } }));
      return;
    }
    const payload = "raw" in scripted ? scripted.raw : this.completion(body, scripted);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(payload));
  }

  private completion(body: ChatRequestBody, scripted: Extract<Scripted, { text: string }> | Extract<Scripted, { tools: ScriptedCall[] }>) {
    const toolCalls =
      "tools" in scripted
        ? scripted.tools.map((c) => ({
            id: c.id ?? `call_${++this.callCounter}`,
            type: "function",
            function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
          }))
        : undefined;
    const usage = "usage" in scripted && scripted.usage ? scripted.usage : { prompt: 100, completion: 10 };
    return {
      id: `chatcmpl-${this.requests.length}`,
      object: "chat.completion",
      created: 1_767_225_600,
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: scripted.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
          finish_reason: toolCalls ? "tool_calls" : "stop",
        },
      ],
      usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
    };
  }
}

function isJsonObjectText(text: unknown): boolean {
  if (typeof text !== "string") return false;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed);
  } catch {
    return false;
  }
}
