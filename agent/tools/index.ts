/**
 * The tool registry and the one way a model's tool call runs: look the tool up, parse the JSON
 * arguments, validate them with the tool's zod schema, run it, cap the output. Unknown tools,
 * malformed JSON and invalid arguments become error results for the model, never exceptions.
 *
 * Which calls count as mutations (they decide the no-op verdict): an instance action that
 * succeeded or filed an approval, a notification that was not folded into an earlier one, a
 * created or cancelled wake, a fact remembered or forgotten. Read-only tools, refused or failed
 * calls, and repeats of an already-recorded action never do.
 *
 * Only what the provider can do is offered (`chatToolsFor`: a tool's `needs` capability); a call
 * to a tool the provider lacks is an error result naming the provider and the capability, before
 * anything runs (executeAction would record it failed with the same 501 in any case).
 */
import type { ChatTool } from "../llm/chat-model.ts";
import { getInstanceLogsTool, getInstanceTool, listInstancesTool } from "./fleet-read.ts";
import { instanceActionTools } from "./instance-actions.ts";
import { replaceInstanceTool } from "./replace.ts";
import { forgetTool, rememberTool } from "./memory.ts";
import { notifyHumanTool } from "./notify.ts";
import { capOutput, describeIssues, toChatTool, type AgentTool, type ToolContext } from "./tool.ts";
import { cancelWakeTool, scheduleNextCheckTool } from "./wakes.ts";
import { markProviderTextRead, PROVIDER_TEXT_TOOLS } from "../prompt/untrusted-input.ts";
import { unsupported, type Capability, type FleetProvider } from "../../fleet/providers/provider.ts";
import { CONTROL_MESSAGE, controlCharacterField } from "../../runtime/plain-text.ts";

export const AGENT_TOOLS: readonly AgentTool[] = [
  listInstancesTool,
  getInstanceTool,
  getInstanceLogsTool,
  ...instanceActionTools,
  replaceInstanceTool,
  notifyHumanTool,
  scheduleNextCheckTool,
  cancelWakeTool,
  rememberTool,
  forgetTool,
];

const byName = new Map(AGENT_TOOLS.map((t) => [t.name, t]));

/** Every tool, as if the provider could do everything (the budget's fixed part is measured on it). */
export const CHAT_TOOLS: readonly ChatTool[] = AGENT_TOOLS.map(toChatTool);

/** The tools offered to the model: those whose capability the provider has. */
export function toolsFor(provider: Pick<FleetProvider, "capabilities">): readonly AgentTool[] {
  return AGENT_TOOLS.filter((t) => !t.needs || provider.capabilities.has(t.needs));
}

const chatToolsByProvider = new WeakMap<ReadonlySet<Capability>, readonly ChatTool[]>();

/** toolsFor as the schemas sent to the model, built once per capability set. */
export function chatToolsFor(provider: Pick<FleetProvider, "capabilities">): readonly ChatTool[] {
  let tools = chatToolsByProvider.get(provider.capabilities);
  if (!tools) chatToolsByProvider.set(provider.capabilities, (tools = toolsFor(provider).map(toChatTool)));
  return tools;
}

export interface ToolCallOutcome {
  /** The capped text given back to the model. */
  content: string;
  mutated: boolean;
  /** Set when the call was refused before running: unknown tool or bad arguments. */
  invalid: boolean;
}

export async function runToolCall(context: ToolContext, name: string, rawArguments: string): Promise<ToolCallOutcome> {
  const tool = byName.get(name);
  if (!tool)
    return invalid(
      `unknown tool: ${name}; available: ${toolsFor(context.deps.provider)
        .map((t) => t.name)
        .join(", ")}`,
    );
  const { provider } = context.deps;
  if (tool.needs && !provider.capabilities.has(tool.needs))
    return invalid(`${name} is not available: ${unsupported(provider.kind, tool.needs).message}`);
  let parsedJson: unknown;
  try {
    parsedJson = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
  } catch {
    return invalid(`arguments of ${name} are not valid JSON: ${rawArguments.slice(0, 200)}`);
  }
  const args = tool.schema.safeParse(parsedJson);
  if (!args.success) return invalid(`invalid arguments for ${name}: ${describeIssues(args.error)}`);
  // Whatever a tool stores (titles, facts, reasons, labels) is plain text, as everywhere else.
  const control = controlCharacterField(args.data);
  if (control !== null) return invalid(`invalid arguments for ${name}: ${control}: ${CONTROL_MESSAGE}`);
  const result = await tool.run(context, args.data as never);
  // What the provider wrote is now in the run's input: facts it remembers from here are marked.
  if (PROVIDER_TEXT_TOOLS.has(name)) markProviderTextRead(context.fence);
  return { content: await capOutput(result.output, context.deps.tokenCounter), mutated: result.mutated, invalid: false };
}

async function invalid(error: string): Promise<ToolCallOutcome> {
  return { content: await capOutput({ error }), mutated: false, invalid: true };
}
