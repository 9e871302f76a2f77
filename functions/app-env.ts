/**
 * The one context type of the app: host bindings plus what middleware puts on the context.
 * Every `new Hono<AppEnv>()` and `createMiddleware<AppEnv>()` uses it.
 */
import type { Deps } from "../runtime/deps.ts";

export type AppEnv = {
  /** Worker vars and secrets on Workers; empty under Node, whose deps are built at start-up. */
  Bindings: Record<string, unknown>;
  Variables: {
    deps: Deps;
    requestId: string;
  };
};
