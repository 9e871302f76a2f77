/**
 * The domain's expected failures. A `RequestError` is a failure the caller can fix, with the HTTP
 * status that says so; jobs/errors.ts maps it to a JSON answer explicitly. Nothing else becomes an
 * HTTP status: an outside service's status (a provider's 404, an LLM's 429) is a 500 of ours
 * unless the code that called it chose a RequestError to say what it means for the caller.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The client statuses the product answers with. */
export type ClientErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 503;

export class RequestError extends Error {
  constructor(
    readonly status: ClientErrorStatus,
    message: string,
  ) {
    super(message);
    this.name = "RequestError";
  }
}

/** The JSON shape of every error answer: `{error}` with its status. */
export const jsonError = (c: Context, status: ContentfulStatusCode, error: string) => c.json({ error }, status);
