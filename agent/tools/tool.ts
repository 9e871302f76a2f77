/**
 * What a tool is: a name, a description and a zod schema (from which the JSON schema the model
 * sees is generated), and a function that runs with validated arguments. Running a tool call
 * never throws for bad input or a refused action: the model gets an error result it can read.
 * Every output is capped, so one tool cannot flood the context.
 */
import { z } from "zod";
import type { FleetDeps } from "../../fleet/deps.ts";
import type { Capability } from "../../fleet/providers/provider.ts";
import type { ChatTool } from "../llm/chat-model.ts";
import type { Answering } from "../../fleet/actions/action-key.ts";
import type { RunInput } from "../action-evidence.ts";
import type { RunFence } from "../../pipeline/index.ts";
import type { TokenCounter } from "../deps.ts";
import { truncateToTokensOffThread } from "../prompt/tokens.ts";
import { dataJson } from "../prompt/prompt-data.ts";

export interface ToolContext {
  /** The fleet's ports (tools act and read through the provider, never the LLM) and the token counter. */
  deps: FleetDeps & { tokenCounter?: TokenCounter };
  agentId: string;
  runId: number;
  toolCallId: string;
  /** The run's fence: every write a tool makes commits only while the run holds its lease. */
  fence: RunFence;
  /**
   * What the run answers (its consumed events and wakes): the key of the actions it decides, and
   * their evidence (which events, wakes and human message concern the instance acted on).
   */
  answering: Answering & RunInput;
}

export interface ToolResult {
  output: unknown;
  /** Whether the call changed something durable (see agent/tools/index.ts for which do). */
  mutated: boolean;
}

export interface AgentTool {
  name: string;
  description: string;
  /** The provider capability the tool needs; the tool is offered only when the provider has it. */
  needs?: Capability;
  schema: z.ZodType;
  run(context: ToolContext, args: never): Promise<ToolResult>;
}

/** Defines a tool whose `run` gets the schema's parsed output type. */
export function defineTool<S extends z.ZodType>(tool: {
  name: string;
  description: string;
  needs?: Capability;
  schema: S;
  run(context: ToolContext, args: z.output<S>): Promise<ToolResult>;
}): AgentTool {
  return tool as AgentTool;
}

/** The most tokens a tool result may put into the context. */
export const TOOL_OUTPUT_MAX_TOKENS = 1500;

export function toChatTool(tool: AgentTool): ChatTool {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.schema, { io: "input" }) as Record<string, unknown>;
  return { type: "function", function: { name: tool.name, description: tool.description, parameters } };
}

/** The output as the model sees it, cut to TOOL_OUTPUT_MAX_TOKENS (tokenized on `counter` where the host has one). */
export function capOutput(output: unknown, counter?: TokenCounter): Promise<string> {
  const text = typeof output === "string" ? output : dataJson(output);
  return truncateToTokensOffThread(text, TOOL_OUTPUT_MAX_TOKENS, "tool output", counter);
}

/** A readable error for the model, never an exception for the run. */
export function toolError(message: string): ToolResult {
  return { output: { error: message }, mutated: false };
}

export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "arguments"}: ${i.message}`).join("; ");
}

export const instanceId = z.string().trim().min(1, "must not be empty").max(128).describe("The instance id, as in the fleet snapshot");
export const reason = z.string().trim().min(1, "must not be empty").max(500).describe("Why, in one sentence (recorded in the audit)");
