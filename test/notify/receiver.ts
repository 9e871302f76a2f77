/**
 * A local HTTP receiver standing in for Slack, Discord or ntfy over real loopback HTTP on port 0:
 * records every request (method, path, headers, body), checks it the way that service does, and
 * otherwise answers with scripted statuses (for retry tests).
 *
 * The checks follow each service's own documentation or source:
 * - Slack incoming webhooks (https://api.slack.com/messaging/webhooks#handling_errors): a body
 *   that is not JSON is 400 `invalid_payload`, one without a non-empty `text` is 400 `no_text`.
 *   Escaping (https://api.slack.com/reference/surfaces/formatting#escaping): `&`, `<` and `>` are
 *   control characters and must be sent as `&amp;`, `&lt;`, `&gt;`; Slack itself would accept a raw
 *   `<!channel>` or `<https://x|label>` and act on it (ping the channel, plant a link), so this
 *   receiver refuses every text field holding a raw `<`, `>` or an `&` that does not start one of
 *   those three entities, as 400 `invalid_payload`: the injection is detected, not delivered.
 * - Discord execute webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook):
 *   JSON; `content` up to 2,000 characters, counted as Unicode code points, else 400 code 50035
 *   "Must be 2000 or fewer in length."; an empty message is 400 code 50006. Stricter than Discord:
 *   a message without `allowed_mentions` `{parse: []}` is refused, because without it Discord would
 *   turn `@everyone` in an alert into a ping; and content holding a masked link `[text](url)` that
 *   is not escaped (Discord would render it, showing one text and linking another address) is
 *   refused, so the injection is detected, not delivered (a backslash escapes the next character).
 *   From discord/discord-api-docs c98d64bc233833839cf0d8d369e81b77f21ade60:
 *   developers/resources/webhook.mdx "Execute Webhook" — it "Returns a message or 204 No Content
 *   depending on the `wait` query parameter": with `wait` true, 200 and the created message (its
 *   `id`), else 204 (and "a message that is not saved does not return an error"); a forum or media
 *   channel's webhook needs `thread_id` in the query or `thread_name` in the body, and
 *   `thread_name` "requires the webhook channel to be a forum or media channel";
 *   developers/topics/opcodes-and-status-codes.mdx — 400 code 220001 "Webhooks posted to forum
 *   channels must have a thread_name or thread_id", 220002 "… cannot have both a thread_name and
 *   thread_id", 220003 "Webhooks can only create threads in forum channels";
 *   developers/reference.mdx "Boolean Query Strings" — `True`, `true` or `1`, `False`, `false` or
 *   `0`. Set `discordForum` for a forum channel's webhook; `discordDropsAnswer` answers every
 *   accepted post with a bare 204, as a proxy that loses the query or the answer would.
 * - ntfy publish (binwiederhier/ntfy 81a486ad, server/server.go `handlePublishBody` case 6/7 and
 *   util/peek.go `Peek`, server/config.go `DefaultMessageSizeLimit = 4096`): a body is a message
 *   only when it is valid UTF-8 and shorter than 4,096 bytes (`LimitReached` is `read == limit`,
 *   so exactly 4,096 bytes already counts); otherwise it becomes an attachment (`attachment.txt`),
 *   which this receiver counts in `ntfyAttachments` so tests can assert it never happens. Headers
 *   (server/util.go `readParam`, `maybeDecodeHeader`; util/util.go `ParsePriority`): `Title` may be
 *   an RFC 2047 encoded word; `Priority` must be 1-5 or min/low/default/high/max/urgent, else 400
 *   code 40007 "invalid priority parameter".
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { checkSlackBlocks } from "./slack-receiver.ts";

export type ReceiverService = "slack" | "discord" | "ntfy";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  bodyBytes: number;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** Why the service would have refused (or, for ntfy, converted) each offending request. */
  rejected: string[];
  /** ntfy only: bodies that ntfy would have stored as an attachment instead of a message. */
  ntfyAttachments: number;
  /** Statuses to answer with, in order; once used up, `fallback` answers. */
  script: number[];
  fallback: number;
  /** When true, requests are recorded but never answered (a hung channel). */
  hang: boolean;
  /** Discord only: the webhook posts to a forum channel (needs thread_name or thread_id). */
  discordForum: boolean;
  /** Discord only: an accepted post is answered 204 without the message, whatever `wait` says. */
  discordDropsAnswer: boolean;
  /** The text a scripted non-2xx answer carries. */
  errorBody: string;
  /** The `Location` a scripted 3xx answer carries (a redirect a client must not follow). */
  redirectTo: string | null;
  close(): Promise<void>;
}

interface Refusal {
  status: number;
  body: string;
  contentType: string;
}

export const NTFY_MESSAGE_SIZE_LIMIT = 4096;
const SLACK_ENTITY = /^&(amp|lt|gt);/;
const NTFY_PRIORITIES = new Set(["1", "2", "3", "4", "5", "min", "low", "default", "high", "max", "urgent"]);

/** Where Slack would find a control sequence in `text`, or null when it is properly escaped. */
export function slackControlSequence(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "<" || c === ">") return text.slice(Math.max(0, i - 10), i + 20);
    if (c === "&" && !SLACK_ENTITY.test(text.slice(i))) return text.slice(Math.max(0, i - 10), i + 20);
  }
  return null;
}

function slackTextFields(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) slackTextFields(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) slackTextFields(v, out);
  return out;
}

function checkSlack(body: string): Refusal | null {
  const text = (status: number, said: string): Refusal => ({ status, body: said, contentType: "text/plain" });
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return text(400, "invalid_payload");
  }
  const payload = json as { text?: unknown; blocks?: unknown };
  if (typeof payload.text !== "string" || payload.text.trim() === "") return text(400, "no_text");
  // Blocks Slack cannot render are refused (test/notify/slack-receiver.ts).
  const badBlocks = payload.blocks === undefined ? null : checkSlackBlocks(payload.blocks);
  if (badBlocks) return text(400, badBlocks);
  for (const field of slackTextFields(json)) {
    const found = slackControlSequence(field);
    if (found !== null)
      return { ...text(400, "invalid_payload"), body: `invalid_payload (unescaped control character near ${JSON.stringify(found)})` };
  }
  return null;
}

const DISCORD_BOOLEANS: Record<string, boolean> = { True: true, true: true, "1": true, False: false, false: false, "0": false };

/** A masked link Discord would render, once every backslash-escaped character is taken out. */
export function discordMaskedLink(content: string): string | null {
  return /\[[^\]]*\]\([^)]*\)/.exec(content.replace(/\\[\s\S]/g, ""))?.[0] ?? null;
}

function checkDiscord(body: string, query: URLSearchParams, forum: boolean): Refusal | null {
  const error = (code: number, message: string, errors?: unknown): Refusal => ({
    status: 400,
    body: JSON.stringify({ message, code, ...(errors ? { errors } : {}) }),
    contentType: "application/json",
  });
  const wait = query.get("wait");
  if (wait !== null && !(wait in DISCORD_BOOLEANS)) {
    return error(50035, "Invalid Form Body", {
      wait: { _errors: [{ code: "BOOLEAN_TYPE_CONVERT", message: "Must be either true or false." }] },
    });
  }
  let json: { content?: unknown; allowed_mentions?: { parse?: unknown }; thread_name?: unknown };
  try {
    json = JSON.parse(body) as typeof json;
  } catch {
    return error(50109, "The request body contains invalid JSON.");
  }
  if (typeof json.content !== "string" || json.content === "") return error(50006, "Cannot send an empty message");
  if (Array.from(json.content).length > 2000) {
    return error(50035, "Invalid Form Body", {
      content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
    });
  }
  const parse = json.allowed_mentions?.parse;
  if (!Array.isArray(parse) || parse.length !== 0)
    return error(50035, "Invalid Form Body (this receiver requires allowed_mentions {parse: []})");
  const link = discordMaskedLink(json.content);
  if (link !== null) return error(50035, `Invalid Form Body (this receiver refuses the unescaped masked link ${JSON.stringify(link)})`);
  const threadName = typeof json.thread_name === "string" && json.thread_name !== "" ? json.thread_name : null;
  const threadId = query.get("thread_id");
  if (threadName !== null && threadId !== null)
    return error(220002, "Webhooks posted to forum channels cannot have both a thread_name and thread_id");
  if (threadName !== null && !forum) return error(220003, "Webhooks can only create threads in forum channels");
  if (forum && threadName === null && threadId === null)
    return error(220001, "Webhooks posted to forum channels must have a thread_name or thread_id");
  return null;
}

let discordMessageIds = 1_300_000_000_000_000_000n;

/** What Discord answers an accepted post: the created message with `wait` true, else 204. */
function answerDiscord(res: ServerResponse, query: URLSearchParams, body: string, receiver: Receiver): void {
  if (receiver.discordDropsAnswer || DISCORD_BOOLEANS[query.get("wait") ?? "false"] !== true) {
    res.writeHead(204).end();
    return;
  }
  const sent = JSON.parse(body) as { content: string };
  const message = {
    id: String(++discordMessageIds),
    type: 0,
    content: sent.content,
    channel_id: "1200000000000000001",
    webhook_id: "1100000000000000001",
    timestamp: new Date().toISOString(),
  };
  res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(message));
}

function checkNtfy(headers: IncomingHttpHeaders, raw: Buffer): Refusal | "attachment" | null {
  const priority = String(headers["x-priority"] ?? headers.priority ?? headers.prio ?? headers.p ?? "")
    .trim()
    .toLowerCase();
  if (priority !== "" && !NTFY_PRIORITIES.has(priority)) {
    return {
      status: 400,
      body: JSON.stringify({
        code: 40007,
        http: 400,
        error: "invalid priority parameter",
        link: "https://ntfy.sh/docs/publish/#message-priority",
      }),
      contentType: "application/json",
    };
  }
  const utf8 = (() => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(raw);
      return true;
    } catch {
      return false;
    }
  })();
  return raw.length >= NTFY_MESSAGE_SIZE_LIMIT || !utf8 ? "attachment" : null;
}

/** Decodes an RFC 2047 `=?UTF-8?B?…?=` word as ntfy's mime decoder does; other values as they are. */
export function decodeNtfyHeader(value: string): string {
  const word = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=$/i.exec(value);
  return word ? Buffer.from(word[1]!, "base64").toString("utf8") : value;
}

export async function startReceiver(path = "/hook", fallback = 200, service: ReceiverService | null = null): Promise<Receiver> {
  const pending = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: "",
    received: [],
    rejected: [],
    ntfyAttachments: 0,
    script: [],
    fallback,
    hang: false,
    discordForum: false,
    discordDropsAnswer: false,
    errorBody: "upstream says no",
    redirectTo: null,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of pending) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString("utf8");
      receiver.received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, bodyBytes: raw.length });
      if (receiver.hang) {
        pending.add(res);
        return;
      }
      const query = new URL(req.url ?? "/", "http://receiver").searchParams;
      const refusal =
        service === "slack"
          ? checkSlack(body)
          : service === "discord"
            ? checkDiscord(body, query, receiver.discordForum)
            : service === "ntfy"
              ? checkNtfy(req.headers, raw)
              : null;
      if (refusal === "attachment") {
        receiver.ntfyAttachments++;
        receiver.rejected.push(`ntfy would store a ${raw.length}-byte body as attachment.txt`);
      } else if (refusal && typeof refusal === "object") {
        receiver.rejected.push(refusal.body);
        res.writeHead(refusal.status, { "Content-Type": refusal.contentType }).end(refusal.body);
        return;
      }
      const status = receiver.script.shift() ?? receiver.fallback;
      if (service === "discord" && status >= 200 && status < 300) answerDiscord(res, query, body, receiver);
      else if (status === 204) res.writeHead(204).end();
      else {
        const location = status >= 300 && status < 400 && receiver.redirectTo ? { Location: receiver.redirectTo } : {};
        res.writeHead(status, { "Content-Type": "text/plain", ...location }).end(status < 300 ? "ok" : receiver.errorBody);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
