/**
 * How text that no operator typed reaches the model: only as JSON values inside named data
 * blocks (`<fleet_snapshot>`, `<events>`, …) that the system prompt says hold data, never
 * instructions. `dataJson` escapes what could end a line or a block — JSON already escapes LF,
 * CR and quotes; `<`, `>`, U+0085, U+2028 and U+2029 are escaped here too — so a label, a status
 * message or a webhook message can neither start a line of the prompt nor close its block.
 * `fitData` cuts a text holding blocks to its share of the budget and closes a block the cut
 * went through, with a JSON line saying what was cut, so a cut block is still well-formed.
 */
import type { TokenCounter } from "../deps.ts";
import { countText, precount, truncateToTokens, truncateToTokensOffThread } from "./tokens.ts";

/** The data blocks the prompt uses; the system prompt names each one. */
export const DATA_BLOCKS = ["memory", "fleet_snapshot", "rejections", "events", "summary"] as const;
export type DataBlock = (typeof DATA_BLOCKS)[number];

const UNSAFE = /[<>\u0085\u2028\u2029]/g;

/** One JSON value on one line, with nothing in it that can start a line or open or close a tag. */
export function dataJson(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A block of JSON lines, one value a line. */
export function dataBlock(name: DataBlock, values: readonly unknown[]): string {
  return [`<${name}>`, ...values.map(dataJson), `</${name}>`].join("\n");
}

/** Tokens kept free below the cap for the closing tag and the JSON cut line. */
const CLOSE_RESERVE = 24;

/**
 * Cuts `text` to at most `maxTokens` (tokenized on `counter` where the host has one), like
 * truncateToTokensOffThread; a cut that ends inside a data block drops the partial line and closes
 * the block with a `{"truncated": …}` line. Text that fits is returned unchanged.
 */
export async function fitData(text: string, maxTokens: number, what: string, counter?: TokenCounter): Promise<string> {
  await precount([text], counter);
  if (countText(text) <= maxTokens) return text;
  for (let reserve = CLOSE_RESERVE; reserve < maxTokens; reserve *= 2) {
    const cut = closeCutBlock(await truncateToTokensOffThread(text, maxTokens - reserve, what, counter), what);
    await precount([cut], counter);
    if (countText(cut) <= maxTokens) return cut;
  }
  return "";
}

/** fitData counted in place, for a cut made while the prompt is fitted (agent/prompt/budget.ts). */
export function fitDataInPlace(text: string, maxTokens: number, what: string): string {
  if (countText(text) <= maxTokens) return text;
  for (let reserve = CLOSE_RESERVE; reserve < maxTokens; reserve *= 2) {
    const cut = closeCutBlock(truncateToTokens(text, maxTokens - reserve, what), what);
    // A reserve that leaves no room for the cut's own marker answers "": try the fallback instead.
    if (cut && countText(cut) <= maxTokens) return cut;
  }
  // Too little room to close a block: keep what comes before the first block (the run's own
  // words, e.g. "Run 12 at …"), cut to the room, so no block is left open and the text still says
  // what it is.
  const firstBlock = text.search(new RegExp(`^<(${DATA_BLOCKS.join("|")})>$`, "m"));
  return truncateToTokens(firstBlock >= 0 ? text.slice(0, firstBlock).trimEnd() : text, maxTokens, what);
}

/** Closes the data block a cut ended in, moving the cut's marker into the block as JSON. */
export function closeCutBlock(cut: string, what: string): string {
  const at = cut.lastIndexOf(`\n[… ${what} truncated:`);
  if (at < 0) return cut;
  const lines = cut.slice(0, at).split("\n");
  const note = cut.slice(at + 1);
  let open: DataBlock | null = null;
  for (const line of lines) {
    const tag = /^<(\/?)([a-z_]+)>$/.exec(line);
    if (!tag || !(DATA_BLOCKS as readonly string[]).includes(tag[2]!)) continue;
    open = tag[1] ? null : (tag[2] as DataBlock);
  }
  if (open === null) return cut;
  // The last line may be cut mid-value: it goes, whole lines stay.
  if (lines.at(-1) !== `<${open}>`) lines.pop();
  return [...lines, dataJson({ truncated: note.replace(/^\[|\]$/g, "") }), `</${open}>`].join("\n");
}
