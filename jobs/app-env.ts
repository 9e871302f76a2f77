/**
 * The one context type of the app: host bindings plus what middleware puts on the context.
 * Every `new Hono<AppEnv>()` and `createMiddleware<AppEnv>()` uses it; auth's middleware uses the
 * part of it that authentication reads and sets (auth/auth-env.ts).
 */
import type { AuthEnv } from "../auth/auth-env.ts";
import type { AgentRow } from "../pipeline/index.ts";
import type { Deps } from "./deps.ts";

export type AppEnv = {
  /** Worker vars and secrets on Workers; empty under Node, whose deps are built at start-up. */
  Bindings: Record<string, unknown>;
  Variables: AuthEnv["Variables"] & {
    deps: Deps;
    /** The agent of an /api/agents/:agent route, once loaded (functions/agents/load-agent.ts). */
    agent: AgentRow;
    /** The host's own config, before any agent's settings (the dashboard shows what comes from the environment). */
    hostConfig: Deps["config"];
  };
};
