/**
 * Slack's request signature (https://docs.slack.dev/authentication/verifying-requests-from-slack,
 * read 2026-12-02): `X-Slack-Signature` is `v0=` + hex HMAC-SHA256, keyed with the app's signing
 * secret, of `v0:<X-Slack-Request-Timestamp>:<raw body>`; a timestamp more than five minutes from
 * now is refused so a captured request cannot be replayed later. Checked on the raw body before
 * anything is parsed, compared in constant time (auth/secrets.ts). Pure: Web Crypto only, the time
 * is given, so it runs the same in workerd and under a fake clock.
 */
import { sameSecret } from "./secrets.ts";

export const SLACK_MAX_SKEW_MS = 5 * 60_000;

export type SlackVerdict = { ok: true } | { ok: false; reason: string };

export async function slackSignature(secret: string, timestamp: string, raw: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`v0:${timestamp}:${raw}`)));
  return `v0=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export async function verifySlackRequest(
  secret: string,
  request: { timestamp: string | undefined; signature: string | undefined; raw: string },
  now: number,
): Promise<SlackVerdict> {
  const { timestamp, signature, raw } = request;
  if (!timestamp || !/^[0-9]{1,12}$/.test(timestamp))
    return { ok: false, reason: "X-Slack-Request-Timestamp is missing or not a number of seconds" };
  if (Math.abs(now - Number(timestamp) * 1000) > SLACK_MAX_SKEW_MS)
    return { ok: false, reason: "X-Slack-Request-Timestamp is more than 5 minutes from now" };
  if (!signature?.startsWith("v0=")) return { ok: false, reason: "X-Slack-Signature is missing or not v0=" };
  const expected = await slackSignature(secret, timestamp, raw);
  return (await sameSecret(signature, expected)) ? { ok: true } : { ok: false, reason: "X-Slack-Signature does not match" };
}
