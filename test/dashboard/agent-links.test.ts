/**
 * How the selected agent is kept in rendered HTML and redirects: added to internal links and
 * actions (before a fragment, after an existing query, `&` escaped as rendered), a hidden field
 * in GET forms, never on shared paths or links that already name an agent, nothing for `default`.
 */
import { describe, expect, it } from "vitest";
import { agentPath, keepAgentInLinks } from "../../dashboard/shell/agent-links.ts";

describe("agent links", () => {
  it("adds the agent to a path, keeping its query and fragment", () => {
    expect(agentPath("/runs", "team-b")).toBe("/runs?agent=team-b");
    expect(agentPath("/fleet?sort=state&done=x", "team-b")).toBe("/fleet?sort=state&done=x&agent=team-b");
    expect(agentPath("/approvals#approval-3", "team-b")).toBe("/approvals?agent=team-b#approval-3");
    expect(agentPath("/?agent=default", "team-b")).toBe("/?agent=default");
    expect(agentPath("/assets/dashboard.css", "team-b")).toBe("/assets/dashboard.css");
    expect(agentPath("/runs", "default")).toBe("/runs");
  });

  it("rewrites every internal href and action of rendered HTML, and only those", () => {
    const html =
      '<a href="/fleet?sort=id&amp;dir=asc">x</a><a href="https://example.com/">y</a><a href="#main">z</a>' +
      '<form method="post" action="/trigger"></form><form method="get" action="/fleet" class="f"></form>' +
      '<form method="get" action="/" data-agent-switcher=""></form><p>href=&quot;/runs&quot; (text: JSX escapes its quotes)</p>' +
      '<link rel="stylesheet" href="/assets/dashboard.css">';
    expect(keepAgentInLinks(html, "team-b")).toBe(
      '<a href="/fleet?sort=id&amp;dir=asc&amp;agent=team-b">x</a><a href="https://example.com/">y</a><a href="#main">z</a>' +
        '<form method="post" action="/trigger?agent=team-b"></form><form method="get" action="/fleet?agent=team-b" class="f"><input type="hidden" name="agent" value="team-b"></form>' +
        '<form method="get" action="/?agent=team-b" data-agent-switcher=""></form><p>href=&quot;/runs&quot; (text: JSX escapes its quotes)</p>' +
        '<link rel="stylesheet" href="/assets/dashboard.css">',
    );
    expect(keepAgentInLinks(html, "default")).toBe(html);
  });
});
