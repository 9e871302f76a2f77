/**
 * The Node host's token-count worker thread: it counts exactly what agent/prompt/tokens.ts counts in
 * place, it truncates to the same text, at most MAX_IN_FLIGHT requests wait on it, and a thread
 * that crashes is logged once while every short request is still answered (in place) and a long
 * one refused (the caller estimates; test/agent/output-cap.test.ts has the deadline).
 */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT, TokenWorker } from "../../functions/host/token-worker.ts";
import { countText, tokenizeInProcess, truncateToTokens, truncateToTokensOffThread } from "../../agent/prompt/tokens.ts";
import type { Logger } from "../../runtime/log.ts";
import { crashingThread, stuckThread } from "../support/token-threads.ts";

const workers: TokenWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

function recordingLog(): Logger & { errors: { message: string; fields?: Record<string, unknown> }[] } {
  const errors: { message: string; fields?: Record<string, unknown> }[] = [];
  return { errors, info: () => {}, error: (message, fields) => errors.push({ message, ...(fields ? { fields } : {}) }) };
}

function start(script?: URL, log: Logger = recordingLog()): TokenWorker {
  const worker = script ? new TokenWorker(log, script) : new TokenWorker(log);
  workers.push(worker);
  return worker;
}

const fleetLine = (i: number) => `- sim-${i} "trainer-${i}": running since 2026-12-01T02:00:00.000Z, 1x RTX 4090 $0.4/h msg: ok\n`;
const TEXTS = [
  "",
  "restart sim-3, it exited",
  "Ünïcödé — 東京 🚀 and emoji 👩‍💻",
  "typed by a human: <|endoftext|> <|im_start|>system",
  JSON.stringify({ instances: Array.from({ length: 50 }, (_, i) => ({ id: `sim-${i}`, state: "exited", gpu: "RTX 4090" })) }),
  Array.from({ length: 400 }, (_, i) => fleetLine(i)).join(""),
];

describe("token-count worker thread", () => {
  it("answers the same tokens as counting in place", async () => {
    const worker = start();
    const tokens = await worker.tokenize(TEXTS);
    expect(tokens.map((t) => Array.from(t))).toEqual(tokenizeInProcess(TEXTS).map((t) => Array.from(t)));
    expect(tokens.map((t) => t.length)).toEqual(TEXTS.map(countText));
    expect(worker.alive).toBe(true);
  });

  it("cuts a long text to the same result as truncateToTokens", async () => {
    const worker = start();
    const long = Array.from({ length: 600 }, (_, i) => fleetLine(i + 1000)).join("");
    const cut = await truncateToTokensOffThread(long, 700, "fleet snapshot", worker);
    expect(cut).toBe(truncateToTokens(long, 700, "fleet snapshot"));
    expect(cut).toContain("fleet snapshot truncated");
    expect(countText(cut)).toBeLessThanOrEqual(700);
    // A text within the limit comes back whole.
    const fits = Array.from({ length: 30 }, (_, i) => fleetLine(i + 5000)).join("");
    expect(await truncateToTokensOffThread(fits, 10_000, "x", worker)).toBe(fits);
  });

  it("a thread that crashes is logged once and every short request is still answered, in place; a long one is refused (estimated)", async () => {
    const log = recordingLog();
    const worker = start(crashingThread, log);
    const short = TEXTS.slice(0, 5);
    const [owed, after] = await Promise.all([worker.tokenize(short), worker.tokenize(["one more"])]);
    expect(owed.map((t) => t.length)).toEqual(short.map(countText));
    expect(after[0]!.length).toBe(countText("one more"));
    expect(worker.alive).toBe(false);
    expect((await worker.tokenize(short.slice(4)))[0]!.length).toBe(countText(short[4]!));
    await expect(worker.tokenize(TEXTS)).rejects.toThrow(/too many to count on the event loop/);
    expect(log.errors).toHaveLength(1);
    expect(log.errors[0]!.message).toMatch(/token-count worker thread stopped/);
    expect(String(log.errors[0]!.fields?.why)).toContain("tokenizer blew up");
  });

  it(`at most ${MAX_IN_FLIGHT} requests wait on the thread; the rest are counted in place at once`, async () => {
    const worker = start(stuckThread);
    const settled: number[] = [];
    const requests = Array.from({ length: MAX_IN_FLIGHT + 5 }, (_, i) =>
      worker.tokenize([`request ${i}`]).then((t) => (settled.push(i), t)),
    );
    // The requests past the bound are answered at once; the stuck thread answers none of the others.
    await Promise.all(requests.slice(MAX_IN_FLIGHT));
    expect(settled.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4].map((i) => MAX_IN_FLIGHT + i));
    // Closing answers what the thread still owed, in place.
    await worker.close();
    const all = await Promise.all(requests);
    expect(all.map((t) => t[0]!.length)).toEqual(Array.from({ length: MAX_IN_FLIGHT + 5 }, (_, i) => countText(`request ${i}`)));
  });
});
