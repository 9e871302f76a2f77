/**
 * The history's stored token counts are used, not tokenized again: every message rebuilt from
 * `messages` rows keeps the count stored with it (measured by countMessage when it was written),
 * so fitting a prompt of 25,000 tokens of history does not re-tokenize it on every run. The
 * counts here are marked (far from the text's real count) to show which count is used. A tool
 * call whose stored arguments had to be normalised is not the text that was counted: it is
 * counted afresh.
 */
import { describe, expect, it } from "vitest";
import { countMessage, countPrompt } from "../../agent/prompt/tokens.ts";
import { turnsFromStored, type StoredMessage } from "../../agent/prompt/turns.ts";

const call = (id: string, args: string) => [{ id, type: "function", function: { name: "get_instance_logs", arguments: args } }];
const rows: StoredMessage[] = [
  { id: 1, role: "user", content: "sim-2 reported exited", toolCalls: null, toolCallId: null, tokens: 777 },
  { id: 2, role: "assistant", content: "", toolCalls: call("c1", '{"instance_id":"sim-2"}'), toolCallId: null, tokens: 888 },
  { id: 3, role: "tool", content: '{"log":"CUDA out of memory"}', toolCalls: null, toolCallId: "c1", tokens: 999 },
  { id: 4, role: "assistant", content: "Restarted sim-2.", toolCalls: null, toolCallId: null, tokens: 555 },
];

describe("turns rebuilt from stored messages", () => {
  it("keep each message's stored count, so counting the prompt tokenizes none of them", () => {
    const turns = turnsFromStored(rows);
    const messages = turns.flatMap((t) => t.messages);
    expect(messages.map(countMessage)).toEqual([777, 888, 999, 555]);
    expect(turns.map((t) => t.tokens)).toEqual([777, 888 + 999, 555]);
    expect(countPrompt(messages)).toBe(countPrompt([]) + 777 + 888 + 999 + 555);
  });

  it("count a tool call afresh when its stored arguments had to be normalised", () => {
    const malformed: StoredMessage[] = [{ ...rows[1]!, toolCalls: call("c1", "{not json") }, rows[2]!];
    const [turn] = turnsFromStored(malformed);
    const [assistant, result] = turn!.messages;
    const fresh = countMessage({ ...assistant! });
    expect(fresh).toBeLessThan(100);
    expect(countMessage(assistant!)).toBe(fresh);
    expect(countMessage(result!)).toBe(999);
    expect(turn!.tokens).toBe(fresh + 999);
  });
});
