/** remember and forget: pinned facts, sent with every prompt and kept across session resets. */
import { z } from "zod";
import { forget, MemoryFullError, remember } from "../memory.ts";
import { defineTool, toolError } from "./tool.ts";

const key = z
  .string()
  .trim()
  .regex(/^[\w.:-]{1,64}$/, "must be 1-64 letters, digits, _ . : or -");

export const rememberTool = defineTool({
  name: "remember",
  description: "Pin a durable fact under a key (replaces the fact already under that key).",
  schema: z.object({ key, fact: z.string().trim().min(1, "must not be empty").max(500) }).strict(),
  async run({ deps, agentId, fence }, args) {
    try {
      const { replaced } = await remember(deps, agentId, args.key, args.fact, fence);
      return { output: { remembered: args.key, replaced }, mutated: true };
    } catch (err) {
      if (err instanceof MemoryFullError) return toolError(err.message);
      throw err;
    }
  },
});

export const forgetTool = defineTool({
  name: "forget",
  description: "Remove a pinned fact by key.",
  schema: z.object({ key }).strict(),
  async run({ deps, agentId, fence }, args) {
    const removed = await forget(deps, agentId, args.key, fence);
    return removed ? { output: { forgotten: args.key }, mutated: true } : toolError(`no fact under key ${args.key}`);
  },
});
