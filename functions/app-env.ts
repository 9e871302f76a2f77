/**
 * The one context type of the app: host bindings plus what middleware puts on the context.
 * Every `new Hono<AppEnv>()` and `createMiddleware<AppEnv>()` uses it.
 */
import type { Deps } from "../runtime/deps.ts";
import type { AgentRow } from "../triggers/agents.ts";
import type { Principal } from "./auth/roles.ts";
import type { LiveSession } from "./auth/sessions-store.ts";

export type AppEnv = {
  /** Worker vars and secrets on Workers; empty under Node, whose deps are built at start-up. */
  Bindings: Record<string, unknown>;
  Variables: {
    deps: Deps;
    requestId: string;
    /** Who is acting: set by the API's auth and the dashboard's session guard. */
    operator: Principal;
    /** The dashboard session of this request's cookie, once looked up (null: none). */
    session: LiveSession | null;
    /** The agent of an /api/agents/:agent route, once loaded (functions/agents/load-agent.ts). */
    agent: AgentRow;
  };
};
