/**
 * How the dashboard carries the selected agent: in the URL's query, `?agent=<id>`, absent for the
 * default agent. A query rather than a path prefix because every existing address (bookmarks,
 * approval links already sent, the sign-in `next`) stays valid and means the default agent, the
 * route table stays one line per page, and a single-agent install never shows the parameter.
 *
 * Components do not thread the agent through: the renderer passes each page's and each live
 * region's HTML through `keepAgentInLinks`, which adds the parameter to every internal `href` and
 * `action`, so a link added later cannot forget it; a GET form (whose action's query the browser
 * drops) gets a hidden `agent` field instead. Redirects after a post go through `agentPath`.
 */
import { DEFAULT_AGENT } from "../../pipeline/index.ts";

export const AGENT_PARAM = "agent";
/** Marks the switcher's own GET form, whose select already names the agent. */
export const AGENT_SWITCHER = "data-agent-switcher";

/** Paths that are the same for every agent: static assets and the session's own routes. */
const SHARED_PATHS = /^\/(assets\/|favicon\.|sign-in|sign-out)/;

/** `path` (a local path, maybe with query and fragment) on the selected agent. */
export function agentPath(path: string, agentId: string): string {
  if (agentId === DEFAULT_AGENT || SHARED_PATHS.test(path)) return path;
  const hash = path.indexOf("#");
  const [base, fragment] = hash === -1 ? [path, ""] : [path.slice(0, hash), path.slice(hash)];
  if (new URLSearchParams(base.split("?")[1] ?? "").has(AGENT_PARAM)) return path;
  return `${base}${base.includes("?") ? "&" : "?"}${AGENT_PARAM}=${encodeURIComponent(agentId)}${fragment}`;
}

/**
 * Rendered HTML with the agent added to every internal link and form action. Works on what Hono
 * JSX renders: attributes double-quoted, `&` escaped as `&amp;` (agent ids are [A-Za-z0-9_-]).
 */
export function keepAgentInLinks(html: string, agentId: string): string {
  if (agentId === DEFAULT_AGENT) return html;
  return html
    .replace(/\b(href|action)="(\/(?![/\\])[^"]*)"/g, (_, attribute: string, value: string) => {
      const path = value.replaceAll("&amp;", "&");
      return `${attribute}="${agentPath(path, agentId).replaceAll("&", "&amp;")}"`;
    })
    .replace(/<form\b[^>]*\bmethod="get"[^>]*>/g, (form) =>
      form.includes(AGENT_SWITCHER) ? form : `${form}<input type="hidden" name="${AGENT_PARAM}" value="${agentId}">`,
    );
}
