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
 *   "Must be 2000 or fewer in length."; an empty message is 400 code 50006; success is 204. Stricter
 *   than Discord: a message without `allowed_mentions` `{parse: []}` is refused, because without it
 *   Discord would turn `@everyone` in an alert into a ping.
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
  const payload = json as { text?: unknown };
  if (typeof payload.text !== "string" || payload.text.trim() === "") return text(400, "no_text");
  for (const field of slackTextFields(json)) {
    const found = slackControlSequence(field);
    if (found !== null) return { ...text(400, "invalid_payload"), body: `invalid_payload (unescaped control character near ${JSON.stringify(found)})` };
  }
  return null;
}

function checkDiscord(body: string): Refusal | null {
  const error = (code: number, message: string, errors?: unknown): Refusal => ({
    status: 400,
    body: JSON.stringify({ message, code, ...(errors ? { errors } : {}) }),
    contentType: "application/json",
  });
  let json: { content?: unknown; allowed_mentions?: { parse?: unknown } };
  try {
    json = JSON.parse(body) as typeof json;
  } catch {
    return error(50109, "The request body contains invalid JSON.");
  }
  if (typeof json.content !== "string" || json.content === "") return error(50006, "Cannot send an empty message");
  if (Array.from(json.content).length > 2000) {
    return error(50035, "Invalid Form Body", { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } });
  }
  const parse = json.allowed_mentions?.parse;
  if (!Array.isArray(parse) || parse.length !== 0) return error(50035, "Invalid Form Body (this receiver requires allowed_mentions {parse: []})");
  return null;
}

function checkNtfy(headers: IncomingHttpHeaders, raw: Buffer): Refusal | "attachment" | null {
  const priority = String(headers["x-priority"] ?? headers["priority"] ?? headers["prio"] ?? headers["p"] ?? "").trim().toLowerCase();
  if (priority !== "" && !NTFY_PRIORITIES.has(priority)) {
    return { status: 400, body: JSON.stringify({ code: 40007, http: 400, error: "invalid priority parameter", link: "https://ntfy.sh/docs/publish/#message-priority" }), contentType: "application/json" };
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
      const refusal = service === "slack" ? checkSlack(body) : service === "discord" ? checkDiscord(body) : service === "ntfy" ? checkNtfy(req.headers, raw) : null;
      if (refusal === "attachment") {
        receiver.ntfyAttachments++;
        receiver.rejected.push(`ntfy would store a ${raw.length}-byte body as attachment.txt`);
      } else if (refusal && typeof refusal === "object") {
        receiver.rejected.push(refusal.body);
        res.writeHead(refusal.status, { "Content-Type": refusal.contentType }).end(refusal.body);
        return;
      }
      const status = receiver.script.shift() ?? receiver.fallback;
      if (status === 204) res.writeHead(204).end();
      else res.writeHead(status, { "Content-Type": "text/plain" }).end(status < 300 ? "ok" : "upstream says no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
