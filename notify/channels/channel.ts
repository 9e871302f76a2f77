/**
 * What every outbound channel shares: the message it is given, the error it throws, and one
 * bounded HTTP POST. A channel classifies failures so the caller knows whether retrying can help
 * (timeouts, network errors, 429 and 5xx) or not (any other 4xx: a wrong URL or a rejected body).
 * Redirects are not followed (`redirect: "manual"`): a channel URL was checked where it was set
 * (runtime/outbound-url.ts), and a 3xx pointing elsewhere is a failure, not a new destination.
 */
export type Severity = "info" | "warning" | "critical";

export const CHANNEL_NAMES = ["slack", "discord", "ntfy"] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];

export interface ChannelMessage {
  title: string;
  body: string;
  severity: Severity;
  /** The approval it is about: Slack gets Approve/Reject buttons while it is pending (`decidable`), ntfy a view action. */
  approval?: { agentId: string; approvalId: number; url: string; decidable: boolean };
}

/** A channel's settings beside its URL (a Discord forum webhook needs a thread name). */
export interface ChannelOptions {
  discordThreadName?: string | undefined;
}

/** Long enough for a slow webhook, short enough that a hung one never holds a delivery long. */
export const CHANNEL_TIMEOUT_MS = 10_000;

export class ChannelError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = "ChannelError";
  }
}

/**
 * POSTs once with a timeout; resolves with the 2xx answer (status and body, for a channel that
 * checks what it got back), otherwise throws a classified ChannelError.
 */
export async function postOnce(
  channel: ChannelName,
  url: string,
  init: { headers: Record<string, string>; body: string },
  timeoutMs = CHANNEL_TIMEOUT_MS,
): Promise<{ status: number; text: string }> {
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", ...init, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    throw new ChannelError(`${channel}: ${timedOut ? `no answer within ${timeoutMs} ms` : `request failed: ${String(err)}`}`, true);
  }
  const text = await response.text().catch(() => "");
  if (response.ok) return { status: response.status, text };
  const retryable = response.status === 429 || response.status >= 500;
  throw new ChannelError(`${channel}: HTTP ${response.status} ${text.slice(0, 200)}`.trim(), retryable, response.status);
}

export const severityLabel = (severity: Severity) => severity.toUpperCase();
