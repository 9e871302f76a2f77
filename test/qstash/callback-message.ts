/**
 * The message the QStash fake publishes to a callback URL after an attempt (or, for a failure
 * callback, after the last one failed), as upstash/docs `qstash/features/callbacks.mdx` (commit
 * 780029f70c14f963eea4dee5f381e84a7ddec3ea) describes its JSON body. The callback's own message
 * is configured by the `Upstash-Callback-*` / `Upstash-Failure-Callback-*` family read in
 * publish-headers.ts: its forwarded headers, retries (the original's unless set), method and delay.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { CallbackConfig, PublishSchedule } from "./publish-headers.ts";

interface SourceMessage {
  messageId: string;
  destination: string;
  headers: IncomingHttpHeaders;
  body: string;
  method: string;
  retried: number;
  retries: number;
  notBefore: number;
  createdAt: number;
}

/** What the destination answered to the attempt (status 0: unreachable), at the fake's clock. */
export interface AttemptOutcome {
  status: number;
  headers: Record<string, string[]>;
  /** base64 of the answer's body. */
  body: string;
  now: number;
}

export function callbackMessage(source: SourceMessage, callback: CallbackConfig, outcome: AttemptOutcome, failure: boolean) {
  const sourceHeader = Object.fromEntries(
    Object.entries(source.headers)
      .filter(([name]) => name.startsWith("upstash-forward-"))
      .map(([name, value]) => [name.slice("upstash-forward-".length), [String(value)]]),
  );
  const body = JSON.stringify({
    status: outcome.status,
    header: outcome.headers,
    body: outcome.body,
    retried: source.retried,
    maxRetries: source.retries,
    ...(failure ? { dlqId: `${outcome.now}-0` } : {}),
    sourceMessageId: source.messageId,
    url: source.destination,
    method: source.method,
    sourceHeader,
    sourceBody: Buffer.from(source.body).toString("base64"),
    notBefore: String(source.notBefore),
    createdAt: String(source.createdAt),
  });
  const schedule: PublishSchedule = {
    notBefore: outcome.now + callback.delayMs,
    retries: callback.retries ?? source.retries,
    method: callback.method,
    flowControl: null,
    callback: null,
    failureCallback: null,
  };
  return {
    destination: callback.url,
    headers: { "content-type": "application/json", ...callback.forward } as IncomingHttpHeaders,
    body,
    ...schedule,
    createdAt: outcome.now,
  };
}
