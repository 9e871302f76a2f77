/**
 * The one place a dashboard request learns which agent it is about: `?agent=<id>` (absent: the
 * default agent; see agent-links.ts for why a query). It runs after the session guard on every
 * signed-in page, the live endpoint and every post, loads the agent, and scopes the request's
 * deps to it (its settings and instance filter, jobs/with-agent.ts) exactly as the API's
 * loadAgent does. Handlers then read `c.get("agent")` and `c.get("deps")` and nothing else.
 *
 * An unknown agent is a 404 page (or JSON for the live endpoint). An archived agent stays
 * viewable, its history kept; `refuseArchived` on the posts that act on it answers 409 with a
 * page saying so, before anything is written.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../jobs/app-env.ts";
import { agentParam } from "../../jobs/agent-requests.ts";
import { DEFAULT_AGENT, findAgentRecent } from "../../pipeline/index.ts";
import { scopeToAgent } from "../../jobs/with-agent.ts";
import { AGENT_PARAM } from "./agent-links.ts";
import { Document } from "./layout.tsx";
import { sendHtml, sendPage } from "./render.tsx";

type Ctx = Context<AppEnv>;

/** The selected agent's id (after selectAgent). */
export const selectedAgentId = (c: Ctx): string => c.get("agent").id;

function unknownAgentPage(c: Ctx, requested: string) {
  return sendHtml(
    c,
    <Document title="Agent not found">
      <body>
        <main id="main">
          <h1>Agent not found</h1>
          <p>{`There is no agent “${requested}”.`}</p>
          <p>
            <a href="/agents">All agents</a> · <a href="/">The default agent</a>
          </p>
        </main>
      </body>
    </Document>,
    404,
  );
}

/** Loads the agent named by `?agent=` and scopes the request to it; `json` for the live endpoint. */
export function selectAgent(answer: "page" | "json") {
  return createMiddleware<AppEnv>(async function selectAgentMiddleware(c, next) {
    const requested = c.req.query(AGENT_PARAM) ?? DEFAULT_AGENT;
    const deps = c.get("deps");
    const valid = agentParam.shape.agent.safeParse(requested);
    const agent = valid.success ? await findAgentRecent(deps.db, valid.data, deps.clock.now()) : null;
    if (!agent) return answer === "json" ? c.json({ error: `unknown agent: ${requested}` }, 404) : unknownAgentPage(c, requested);
    c.set("agent", agent);
    c.set("hostConfig", deps.config);
    c.set("deps", scopeToAgent(deps, agent).deps);
    return next();
  });
}

/** After selectAgent, on posts that act on the agent: an archived agent starts and changes nothing. */
export const refuseArchived = createMiddleware<AppEnv>(async function refuseArchivedMiddleware(c, next) {
  const agent = c.get("agent");
  if (agent.archivedAt === null) return next();
  return sendPage(
    c,
    { title: "Agent archived", current: null, status: 409 },
    <p class="error" role="alert">
      {`Agent ${agent.name ?? agent.id} is archived: its history stays here to read, but it takes no messages, triggers, resets, decisions or actions. Nothing was done.`}
    </p>,
  );
});
