/**
 * Slack, strict, for the approval buttons (issue #24, item 5), over real loopback HTTP.
 *
 * `checkSlackBlocks` is what the incoming webhook (test/notify/receiver.ts) also checks when a
 * message carries `blocks`: Slack answers 400 `invalid_blocks` for blocks it cannot render. From
 * Slack's docs, read 2026-12-02: incoming webhooks (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks,
 * "Handling errors": `invalid_payload`, `no_text`, `invalid_blocks`), the section block
 * (https://docs.slack.dev/reference/block-kit/blocks/section-block: `text` a text object of at
 * most 3,000 characters), the actions block (https://docs.slack.dev/reference/block-kit/blocks/actions-block:
 * up to 25 interactive `elements`, `block_id` ≤ 255) and the button element
 * (https://docs.slack.dev/reference/block-kit/block-elements/button-element: `text` plain_text
 * ≤ 75 characters, `action_id` ≤ 255 and unique in its block, `value` ≤ 2,000, `style` only
 * `primary` or `danger`). Stricter than Slack: a button without `action_id` or `value` is refused
 * (ours are read back from the click).
 *
 * `startResponseUrl` stands in for an interaction's `response_url`
 * (https://docs.slack.dev/interactivity/handling-user-interaction#message_responses): JSON only;
 * either `replace_original: true` with `text` (and optional valid `blocks`), or
 * `response_type: "ephemeral"` with `text`; anything else is 400 `invalid_payload`; at most 5
 * uses (Slack's limit within 30 minutes), the sixth is 404 `used_url`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

type Json = Record<string, unknown>;
const isText = (t: unknown, max: number, types = ["plain_text", "mrkdwn"]) =>
  !!t &&
  typeof t === "object" &&
  types.includes((t as Json).type as string) &&
  typeof (t as Json).text === "string" &&
  ((t as Json).text as string).length > 0 &&
  ((t as Json).text as string).length <= max;

/** Why Slack would refuse these blocks (`invalid_blocks …`), or null. */
export function checkSlackBlocks(blocks: unknown): string | null {
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50) return "invalid_blocks (blocks must be an array of 1-50)";
  for (const [i, block] of blocks.entries()) {
    const b = block as Json;
    if (typeof b.block_id === "string" && b.block_id.length > 255) return `invalid_blocks (block ${i}: block_id longer than 255)`;
    if (b.type === "section") {
      if (!isText(b.text, 3000)) return `invalid_blocks (block ${i}: section text must be a text object of 1-3000 characters)`;
    } else if (b.type === "actions") {
      const elements = b.elements;
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25)
        return `invalid_blocks (block ${i}: actions needs 1-25 elements)`;
      const ids = new Set<string>();
      for (const e of elements as Json[]) {
        if (e.type !== "button") return `invalid_blocks (block ${i}: unexpected element ${String(e.type)})`;
        if (!isText(e.text, 75, ["plain_text"])) return `invalid_blocks (block ${i}: button text must be plain_text of 1-75 characters)`;
        if (typeof e.action_id !== "string" || e.action_id.length > 255 || ids.has(e.action_id))
          return `invalid_blocks (block ${i}: action_id missing, too long or repeated)`;
        ids.add(e.action_id);
        if (typeof e.value !== "string" || e.value.length > 2000) return `invalid_blocks (block ${i}: value missing or longer than 2000)`;
        if (e.style !== undefined && e.style !== "primary" && e.style !== "danger")
          return `invalid_blocks (block ${i}: style must be primary or danger)`;
      }
    } else return `invalid_blocks (block ${i}: unknown type ${String(b.type)})`;
  }
  return null;
}

export interface ResponseUrl {
  url: string;
  received: Json[];
  rejected: string[];
  close(): Promise<void>;
}

function checkResponse(body: string): string | null {
  let m: Json;
  try {
    m = JSON.parse(body) as Json;
  } catch {
    return "invalid_payload";
  }
  if (typeof m.text !== "string" || m.text === "") return "no_text";
  if (m.replace_original === true) return m.blocks === undefined ? null : checkSlackBlocks(m.blocks);
  if (m.response_type === "ephemeral" && m.replace_original !== true) return null;
  return "invalid_payload (neither replace_original nor an ephemeral response)";
}

export async function startResponseUrl(): Promise<ResponseUrl> {
  const receiver: ResponseUrl = {
    url: "",
    received: [],
    rejected: [],
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
  let uses = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (++uses > 5) return void res.writeHead(404, { "Content-Type": "text/plain" }).end("used_url");
      const refusal =
        req.method !== "POST" || !String(req.headers["content-type"]).startsWith("application/json")
          ? "invalid_payload (POST application/json only)"
          : checkResponse(body);
      if (refusal) {
        receiver.rejected.push(refusal);
        return void res.writeHead(400, { "Content-Type": "text/plain" }).end(refusal);
      }
      receiver.received.push(JSON.parse(body) as Json);
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/actions/T000/1234/abcd`;
  return receiver;
}
