/**
 * The page frame every dashboard page shares: skip link, navigation (current page marked for
 * screen readers too), the agent switcher (only once there is more than one agent to show),
 * sign-out form, the simulated-fleet and archived-agent banners, a one-line notice after an
 * action, and the stylesheet and script routes.
 */
import type { Child } from "hono/jsx";
import { AGENT_SWITCHER } from "./agent-links.ts";
import { CSRF_FIELD } from "../../auth/session-write.ts";
import { DEFAULT_AGENT } from "../../pipeline/index.ts";
import type { Viewer } from "./can.ts";

export const NAV = [
  { key: "overview", href: "/", label: "Overview" },
  { key: "fleet", href: "/fleet", label: "Fleet" },
  { key: "runs", href: "/runs", label: "Runs" },
  { key: "wakes", href: "/wakes", label: "Wakes" },
  { key: "notifications", href: "/notifications", label: "Notifications" },
  { key: "approvals", href: "/approvals", label: "Approvals" },
  { key: "chat", href: "/chat", label: "Chat" },
  { key: "agents", href: "/agents", label: "Agents" },
  { key: "operators", href: "/operators", label: "Operators" },
] as const;

/** The Operators page is an admin's; no one else is offered the link. */
const navFor = (viewer: Viewer) => NAV.filter((item) => item.key !== "operators" || viewer.can("manageOperators"));

export type NavKey = (typeof NAV)[number]["key"];

export interface Frame {
  csrf: string;
  /** Who is signed in and what they may do: the controls rendered follow it (can.ts). */
  viewer: Viewer;
  simulated: boolean;
  notice?: string | null;
  /** Counts shown in the navigation on every page (pending approvals, things needing attention). */
  badges?: NavBadges;
  /** Server time the page was rendered (the live script then shows when it last updated). */
  renderedAt?: number;
  /** The agent this page is about, and every agent (for the switcher). */
  agent?: AgentChoice;
  agents?: AgentChoice[];
}

export interface AgentChoice {
  id: string;
  name: string;
  archived: boolean;
}

const agentLabel = (a: AgentChoice) => `${a.name === a.id ? a.id : `${a.name} (${a.id})`}${a.archived ? ", archived" : ""}`;

/**
 * Which agent the page is about, and a switch to another (the same section, on that agent). Shown
 * only when there is a choice, or the page is about an agent other than the default. Lists the
 * active agents, plus the selected one when it is archived.
 */
function AgentSwitcher({ agent, agents, current }: { agent: AgentChoice; agents: AgentChoice[]; current: NavKey | null }) {
  const choices = agents.filter((a) => !a.archived || a.id === agent.id);
  if (choices.length < 2 && agent.id === DEFAULT_AGENT) return null;
  const section = NAV.find((item) => item.key === current)?.href ?? "/";
  return (
    <form method="get" action={section} class="agent-switcher" {...{ [AGENT_SWITCHER]: "" }}>
      <label for="agent-switch">Agent</label>
      <select id="agent-switch" name="agent">
        {choices.map((a) => (
          <option value={a.id} selected={a.id === agent.id}>
            {agentLabel(a)}
          </option>
        ))}
      </select>
      <button type="submit">Switch</button>
    </form>
  );
}

export interface NavBadges {
  approvals: number;
  attention: number;
}

/** A count beside a navigation link, re-rendered by the live updates; says what it counts in words. */
export function NavCount({ count, what }: { count: number; what: string }) {
  return count > 0 ? (
    <span class="nav-count">
      {` ${count}`}
      <span class="visually-hidden">{` ${what}`}</span>
    </span>
  ) : null;
}

const BADGE_OF: Partial<Record<NavKey, { part: string; key: keyof NavBadges; what: string }>> = {
  overview: { part: "badge-attention", key: "attention", what: "need attention" },
  approvals: { part: "badge-approvals", key: "approvals", what: "waiting" },
};

/** Hidden CSRF field: put inside every signed-in form. */
export const CsrfField = ({ token }: { token: string }) => <input type="hidden" name={CSRF_FIELD} value={token} />;

export function Document({ title, children }: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · fleetwarden`}</title>
        <link rel="stylesheet" href="/assets/dashboard.css" />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      </head>
      {children}
    </html>
  );
}

export function Layout(props: { title: string; current: NavKey | null; frame: Frame; busy?: boolean; children: Child }) {
  const { frame } = props;
  return (
    <Document title={props.title}>
      <body data-busy={props.busy ? "" : undefined}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <nav aria-label="Dashboard">
            <a class="brand" href="/">
              fleetwarden
            </a>
            {frame.agent && frame.agents ? <AgentSwitcher agent={frame.agent} agents={frame.agents} current={props.current} /> : null}
            <ul>
              {navFor(frame.viewer).map((item) => {
                const badge = BADGE_OF[item.key];
                return (
                  <li>
                    <a href={item.href} aria-current={item.key === props.current ? "page" : undefined}>
                      {item.label}
                      {badge && frame.badges ? (
                        <span data-live={badge.part}>
                          <NavCount count={frame.badges[badge.key]} what={badge.what} />
                        </span>
                      ) : null}
                    </a>
                  </li>
                );
              })}
              <li>
                <form method="post" action="/sign-out">
                  <CsrfField token={frame.csrf} />
                  <button type="submit" class="signout">
                    Sign out
                  </button>
                </form>
              </li>
              <li>
                <form method="post" action="/sign-out-everywhere">
                  <CsrfField token={frame.csrf} />
                  <button type="submit" class="signout">
                    End all my sessions
                  </button>
                </form>
              </li>
            </ul>
          </nav>
        </header>
        <main id="main">
          {frame.simulated ? (
            <p class="banner" role="note">
              <strong>Simulated fleet.</strong> No VAST_API_KEY is set, so these instances are fleetwarden's built-in simulator, not rented
              machines. Actions change nothing outside this database.
            </p>
          ) : null}
          {frame.agent?.archived ? (
            <p class="banner" role="note">
              <strong>{`Agent ${frame.agent.name} is archived.`}</strong> Its history is kept and shown here; it takes no new messages,
              triggers or actions, and the tick no longer visits it.
            </p>
          ) : null}
          {frame.notice ? (
            <p class="notice" role="status">
              {frame.notice}
            </p>
          ) : null}
          <h1>{props.title}</h1>
          <p class="muted live-status" data-live-indicator aria-live="off">
            {frame.renderedAt ? `Shown as of ${new Date(frame.renderedAt).toISOString().slice(11, 19)} UTC.` : null}
          </p>
          <p class="error" data-live-lost role="alert" hidden></p>
          {props.children}
        </main>
        <script src="/assets/dashboard.js" defer></script>
      </body>
    </Document>
  );
}
