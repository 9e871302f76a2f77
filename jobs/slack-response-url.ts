/**
 * Where a Slack interaction's answer goes after the 3-second acknowledgement: its `response_url`
 * (https://docs.slack.dev/interactivity/handling-user-interaction#message_responses, read
 * 2026-12-02: a JSON POST of `{replace_original: true, text, blocks}` replaces the message the
 * buttons were on; `{response_type: "ephemeral", replace_original: false, text}` shows the clicker
 * alone a message; up to 5 times within 30 minutes). Only Slack's own host is trusted as a target
 * (https://hooks.slack.com/…), and a loopback http(s) URL where the deployment sets
 * ALLOW_PRIVATE_URLS=true (local setups, tests): any other address from a payload is ignored and
 * logged, so a forged payload cannot make fleetwarden POST elsewhere. No redirects are followed.
 */
import type { Config } from "../runtime/config.ts";
import type { Logger } from "../runtime/log.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export function acceptedResponseUrl(config: Pick<Config, "allowPrivateUrls">, value: unknown): URL | null {
  if (typeof value !== "string") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.username || url.password) return null;
  if (url.protocol === "https:" && url.hostname === "hooks.slack.com" && url.port === "") return url;
  if (config.allowPrivateUrls && (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.has(url.hostname)) return url;
  return null;
}

export type SlackResponse =
  | { replace_original: true; text: string; blocks?: unknown[] }
  | { response_type: "ephemeral"; replace_original: false; text: string };

export async function postToResponseUrl(log: Logger, url: URL, message: SlackResponse): Promise<void> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(message),
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) log.error("Slack response_url refused the answer", { status: res.status, host: url.host });
  } catch (err) {
    log.error("Slack response_url unreachable", { host: url.host, error: String(err) });
  }
}
