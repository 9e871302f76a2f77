/**
 * Refuses request bodies over `maxSize` (413). A request that declares its length
 * (`Content-Length`, no `Transfer-Encoding`) is judged by that header alone; only one that does
 * not is counted as it streams, by hono's bodyLimit. hono's middleware looks at the body stream
 * first, which on @hono/node-server turns every request into a full Fetch Request (an
 * AbortController, a ReadableStream) even when the header settles it — most of the per-request
 * cost of a small webhook besides its own work. The declared length is exact: Node's HTTP parser
 * refuses a body longer than it.
 */
import { bodyLimit as streamingBodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";

export function bodyLimit(options: { maxSize: number; onError: (c: Context<AppEnv>) => Response | Promise<Response> }) {
  const streaming = streamingBodyLimit(options);
  return createMiddleware<AppEnv>(async function bodyLimitMiddleware(c, next) {
    const length = c.req.header("content-length");
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return streaming(c, next);
    const declared = Number(length);
    if (!Number.isSafeInteger(declared) || declared < 0) return options.onError(c);
    return declared > options.maxSize ? options.onError(c) : next();
  });
}
