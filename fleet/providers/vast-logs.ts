/**
 * Fetching an instance's log the way vast-cli does (vastai/api/instances.py `logs` and
 * `_poll_result_url`): the API answers `PUT /api/v0/instances/request_logs/{id}/` with a
 * `result_url` where the log will appear; that URL is polled (at most `attempts` times, `delayMs`
 * apart, ~9 s like vast-cli) until it answers 200. A poll, not a retry: any other answer means
 * "not there yet". Each request goes through the providers' one HTTP client (`send`); the URL is a
 * storage link outside the API, so the API key is never sent to it.
 */
import { ProviderError } from "./provider.ts";
import { pause, send, type HttpOptions } from "./provider-http.ts";

export interface LogPoll {
  userAgent: string;
  attempts: number;
  delayMs: number;
}

export async function fetchLogResult(instanceId: string, resultUrl: string, http: HttpOptions, poll: LogPoll): Promise<string> {
  let url: URL;
  try {
    url = new URL(resultUrl);
  } catch {
    throw new ProviderError(`Vast.ai sent a malformed log result_url for instance ${instanceId}`, 502, true);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ProviderError(`Vast.ai sent a log result_url that is not http(s) for instance ${instanceId}`, 502, true);
  }
  let lastSeen = "no answer";
  for (let attempt = 1; attempt <= poll.attempts; attempt++) {
    await pause(http, poll.delayMs);
    try {
      const response = await send(http, url, { headers: { "User-Agent": poll.userAgent } });
      const text = await response.text();
      if (response.status === 200) return text;
      lastSeen = `status ${response.status}`;
    } catch (err) {
      lastSeen = String(err);
    }
  }
  throw new ProviderError(
    `Vast.ai logs for instance ${instanceId} were not ready after ${poll.attempts} polls (last: ${lastSeen})`,
    504,
    true,
  );
}
