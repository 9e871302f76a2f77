/** The Cloudflare Workers entry (wrangler.toml `main`): no logic, only the host's two handlers. */
import type { ExecutionContext } from "hono";
import { handleFetch, handleScheduled } from "./host/worker-host.ts";

export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext) => handleFetch(request, env, ctx),
  scheduled: (_controller: unknown, env: Env, ctx: ExecutionContext) => handleScheduled(env, ctx),
};
