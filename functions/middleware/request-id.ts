/**
 * Gives every request an id (kept from `X-Request-Id` when sane) for logs and error bodies.
 * A generated id is a random prefix per process or isolate plus a counter: unique, and cheaper
 * than a UUID per request on the ingest path.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../jobs/app-env.ts";

const SANE_ID = /^[\w-]{1,64}$/;

export function requestId(options: { header?: string } = {}) {
  const header = options.header ?? "X-Request-Id";
  // Made on the first request: workerd refuses random values in a Worker's global scope.
  let prefix = "";
  let counter = 0;
  return createMiddleware<AppEnv>(async function requestIdMiddleware(c, next) {
    const given = c.req.header(header);
    if (!prefix) prefix = crypto.randomUUID().slice(0, 8);
    const id = given && SANE_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
    c.set("requestId", id);
    c.header(header, id);
    await next();
  });
}
