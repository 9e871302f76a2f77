/**
 * agent/prompt/tokens.ts keeps the counts a TokenCounter made so the synchronous counters find them, for
 * at most KNOWN_COUNTS_MAX_CHARS characters of text (oldest forgotten first), and only for texts
 * long enough to be worth a trip to the thread. A counter that answers a recognisable count
 * (one token per 10 characters) shows which counts came from it.
 */
import { describe, expect, it } from "vitest";
import { countText, KNOWN_COUNTS_MAX_CHARS, OFF_THREAD_MIN_CHARS, precount } from "../../agent/prompt/tokens.ts";
import type { TokenCounter } from "../../jobs/deps.ts";

const marked: TokenCounter = { tokenize: async (texts) => texts.map((t) => new Uint32Array(Math.floor(t.length / 10))) };
const text = (tag: string, chars: number) => `${tag} `.padEnd(chars, "restart the exited instance and tell a human. ");

describe("counts made off the event loop", () => {
  it("are used by countText, for long texts only", async () => {
    const long = text("long-1", OFF_THREAD_MIN_CHARS + 500);
    const short = text("short-1", OFF_THREAD_MIN_CHARS - 1);
    const inPlace = countText(long);
    await precount([long, short], marked);
    expect(countText(long)).toBe(Math.floor(long.length / 10));
    expect(countText(long)).not.toBe(inPlace);
    expect(countText(short)).not.toBe(Math.floor(short.length / 10));
  });

  it(`are kept for at most ${KNOWN_COUNTS_MAX_CHARS.toLocaleString("en")} characters, the oldest forgotten first`, async () => {
    const oldest = text("oldest-2", 100_000);
    const inPlace = countText(oldest);
    await precount([oldest], marked);
    expect(countText(oldest)).toBe(10_000);
    const filler = Array.from({ length: KNOWN_COUNTS_MAX_CHARS / 100_000 }, (_, i) => text(`filler-2-${i}`, 100_000));
    await precount(filler, marked);
    expect(countText(oldest)).toBe(inPlace);
    expect(countText(filler.at(-1)!)).toBe(10_000);
  });
});
