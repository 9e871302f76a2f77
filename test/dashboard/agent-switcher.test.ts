/**
 * The dashboard on several agents: the selected agent rides in `?agent=` on every link, form and
 * live poll; every page and every post acts on it and leaves the other agent alone; an unknown
 * agent is a 404 and an archived one is readable but refuses posts, writing nothing. With one
 * agent the page shows no switcher and no parameter.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { executeAction } from "../../fleet/actions/actions.ts";
import { reconcileFleet } from "../support/one-check.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { actions, approvals, events, notifications, sessions, simulatorInstances } from "../../schema/index.ts";
import { archiveAgent, createAgent } from "../../pipeline/index.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

const PAGES = ["/", "/fleet", "/fleet/sim-3", "/runs", "/wakes", "/notifications", "/approvals", "/chat", "/agents", "/operators"];

/** Two agents on one simulated account: `default` sees every instance, `team-b` only sim-3. */
async function twoAgents() {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
  await (deps.provider as SimulatorProvider).seed(3);
  await createAgent(deps.db, { id: "team-b", name: "Team B", settings: { instanceFilter: { ids: ["sim-3"] } } }, deps.clock.now());
  await reconcileFleet(deps, "default");
  await reconcileFleet((await withAgent(deps, "team-b"))!.deps, "team-b");
  return { deps, client: await dashboardClient(deps) };
}

/** Every internal link and form action of a page, as written in the HTML. */
const internalTargets = (html: string) => [...html.matchAll(/\b(?:href|action)="(\/[^"]*)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
const SHARED = /^\/(assets\/|favicon|sign-)/;

/** The agent's inbox events from people (reconciling the fleet at setup writes state events). */
const humanEventsOf = async (deps: Awaited<ReturnType<typeof twoAgents>>["deps"], agentId: string) =>
  (await deps.db.select().from(events).where(eq(events.agentId, agentId))).filter((e) => e.source !== "reconcile");

describe("agent switcher", () => {
  it("with one agent: no switcher and no agent parameter anywhere", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    for (const path of ["/", "/fleet", "/chat"]) {
      const { html } = await client.page(path);
      expect(html, path).not.toContain("data-agent-switcher");
      expect(html, path).not.toContain("agent=");
    }
  });

  it("with two: every page names the selected agent in the switcher and keeps it on every internal link and form", async () => {
    const { client } = await twoAgents();
    const home = await client.page("/");
    expect(home.html).toMatch(/<form method="get" action="\/" class="agent-switcher" data-agent-switcher="">/);
    expect(home.html).toMatch(/<option value="default" selected="">default<\/option>/);
    expect(home.html).toContain('<option value="team-b">Team B (team-b)</option>');
    for (const path of PAGES) {
      const { status, html } = await client.page(`${path}${path.includes("?") ? "&" : "?"}agent=team-b`);
      expect(status, path).toBe(200);
      expect(html, path).toContain('<option value="team-b" selected="">Team B (team-b)</option>');
      // The agents page links each agent's own dashboard by name; every other link stays on team-b.
      const targets = internalTargets(html).filter((t) => !SHARED.test(t) && !(path === "/agents" && t === "/?agent=default"));
      expect(targets.length, path).toBeGreaterThan(5);
      for (const target of targets) expect(new URL(target, "http://x").searchParams.get("agent"), `${path}: ${target}`).toBe("team-b");
    }
    // The fleet filter is a GET form: it carries the agent in a hidden field.
    expect((await client.page("/fleet?agent=team-b")).html).toMatch(
      /<form method="get" action="\/fleet\?agent=team-b" class="inline-form"><input type="hidden" name="agent" value="team-b">/,
    );
  });

  it("each page shows the selected agent's own rows", async () => {
    const { deps, client } = await twoAgents();
    const { approvalId } = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-1",
      reason: "idle",
    });
    const fleetB = (await client.page("/fleet?agent=team-b")).html;
    expect([...fleetB.matchAll(/<tr data-instance-id="([^"]+)"/g)].map((m) => m[1])).toEqual(["sim-3"]);
    const fleetDefault = (await client.page("/fleet")).html;
    expect([...fleetDefault.matchAll(/<tr data-instance-id="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(["sim-1", "sim-2", "sim-3"]);
    expect((await client.page("/approvals")).html).toContain(`id="approval-${approvalId}"`);
    expect((await client.page("/approvals?agent=team-b")).html).not.toContain(`id="approval-${approvalId}"`);
    // The live endpoint answers for the agent it is asked about, links included.
    const live = await client.get(`/live?parts=approvals,fleet-table&page=${encodeURIComponent("/fleet?agent=team-b")}&agent=team-b`);
    const body = (await live.json()) as { html: Record<string, string> };
    expect(body.html.approvals).not.toContain(`approval-${approvalId}`);
    expect(body.html["fleet-table"]).toContain('href="/fleet/sim-3?agent=team-b"');
    expect(body.html["fleet-table"]).not.toContain("sim-1");
  });

  it("an approval's notification links to the approval on its own agent's page", async () => {
    const { deps, client } = await twoAgents();
    const scoped = (await withAgent(deps, "team-b"))!.deps;
    const { approvalId } = await executeAction(scoped, {
      agentId: "team-b",
      runId: null,
      instanceId: "sim-3",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-b",
      reason: "idle",
    });
    const [notice] = await deps.db.select().from(notifications).where(eq(notifications.agentId, "team-b"));
    const link = notice!.body.match(/Decide at (\S+)/)![1]!;
    expect(link).toBe(`/approvals?agent=team-b#approval-${approvalId}`);
    expect((await client.page(link.split("#")[0]!)).html).toContain(`id="approval-${approvalId}"`);
  });

  it("posts act on the selected agent only and redirect back to it", async () => {
    const { deps, client } = await twoAgents();
    const trigger = await client.post("/trigger?agent=team-b", { back: "/runs", nonce: "nonce-b-0001" });
    expect(trigger.status).toBe(303);
    expect(trigger.headers.get("location")).toBe("/runs?done=triggered&agent=team-b");
    const chat = await client.post("/chat?agent=team-b", { text: "hello team b", nonce: "nonce-b-0002" });
    expect(chat.headers.get("location")).toBe("/chat?done=sent&agent=team-b");
    expect((await humanEventsOf(deps, "team-b")).map((e) => e.source).sort()).toEqual(["human", "manual"]);
    expect(await humanEventsOf(deps, "default")).toEqual([]);
    expect((await client.page("/chat?agent=team-b")).html).toContain("hello team b");
    expect((await client.page("/chat")).html).not.toContain("hello team b");

    const reset = await client.post("/session/reset?agent=team-b", { confirmed: "yes" });
    expect(reset.headers.get("location")).toBe("/?done=reset&agent=team-b");
    const epochs = await deps.db.select().from(sessions);
    expect(epochs.filter((s) => s.agentId === "team-b").map((s) => s.epoch)).toEqual([1, 2]);
    expect(epochs.filter((s) => s.agentId === "default").map((s) => s.epoch)).toEqual([1]);
  });

  it("an approval, an instance action or a failure of the other agent is not the selected agent's (404), and nothing changes", async () => {
    const { deps, client } = await twoAgents();
    const { approvalId } = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-1",
      reason: "idle",
    });
    expect((await client.post(`/approvals/${approvalId}?agent=team-b`, { decision: "approve" })).status).toBe(404);
    expect((await deps.db.select().from(approvals).where(eq(approvals.id, approvalId!)))[0]!.status).toBe("pending");
    const actionsBefore = await deps.db.select().from(actions);
    expect((await client.post("/fleet/sim-1/actions?agent=team-b", { kind: "reboot", nonce: "nonce-b-0003", confirm: "yes" })).status).toBe(
      404,
    );
    expect((await client.post("/fleet/sim-1/fail?agent=team-b", { kind: "exit" })).status).toBe(404);
    expect(await deps.db.select().from(actions)).toEqual(actionsBefore);
    expect((await deps.db.select().from(simulatorInstances)).every((i) => i.failure === null)).toBe(true);
    // Its own instance it may act on.
    const own = await client.post("/fleet/sim-3/actions?agent=team-b", { kind: "reboot", nonce: "nonce-b-0004", confirm: "yes" });
    expect(own.headers.get("location")).toBe("/fleet/sim-3?done=action-succeeded&agent=team-b");
    expect(
      await deps.db
        .select()
        .from(actions)
        .where(and(eq(actions.agentId, "team-b"), eq(actions.instanceId, "sim-3"))),
    ).toHaveLength(1);
    expect(await deps.db.select().from(actions).where(eq(actions.agentId, "default"))).toHaveLength(actionsBefore.length);
  });

  it("an unknown agent is a 404 page, a 404 from the live endpoint, and a post to it writes nothing", async () => {
    const { deps, client } = await twoAgents();
    const before = await deps.db.select().from(events);
    for (const agent of ["nobody", "bad id!"]) {
      const page = await client.page(`/runs?agent=${encodeURIComponent(agent)}`);
      expect(page.status).toBe(404);
      expect(page.html).toContain(`There is no agent “${agent}”.`);
    }
    const live = await client.get("/live?parts=state&page=%2F&agent=nobody");
    expect(live.status).toBe(404);
    expect(await live.json()).toEqual({ error: "unknown agent: nobody" });
    expect((await client.post("/trigger?agent=nobody", { nonce: "nonce-x-0001" })).status).toBe(404);
    expect(await deps.db.select().from(events)).toEqual(before);
  });

  it("an archived agent is readable with a banner, and its posts are refused with 409 before anything is written", async () => {
    const { deps, client } = await twoAgents();
    await client.post("/chat?agent=team-b", { text: "before the archive", nonce: "nonce-b-0005" });
    await archiveAgent(deps.db, "team-b", deps.clock.now());
    const chat = await client.page("/chat?agent=team-b");
    expect(chat.status).toBe(200);
    expect(chat.html).toContain("before the archive");
    expect(chat.html).toContain("Agent Team B is archived.");
    expect(chat.html).toContain('<option value="team-b" selected="">Team B (team-b), archived</option>');
    const before = {
      events: await deps.db.select().from(events),
      sessions: await deps.db.select().from(sessions),
      actions: await deps.db.select().from(actions),
    };
    const posts: [string, Record<string, string>][] = [
      ["/trigger?agent=team-b", { nonce: "nonce-b-0006" }],
      ["/chat?agent=team-b", { text: "after", nonce: "nonce-b-0007" }],
      ["/session/reset?agent=team-b", { confirmed: "yes" }],
      ["/approvals/1?agent=team-b", { decision: "approve" }],
      ["/fleet/sim-3/actions?agent=team-b", { kind: "reboot", nonce: "nonce-b-0008" }],
      ["/fleet/sim-3/fail?agent=team-b", { kind: "exit" }],
    ];
    for (const [path, fields] of posts) {
      const res = await client.post(path, fields);
      expect(res.status, path).toBe(409);
      expect(await res.text(), path).toContain("Agent Team B is archived: its history stays here to read");
    }
    expect({
      events: await deps.db.select().from(events),
      sessions: await deps.db.select().from(sessions),
      actions: await deps.db.select().from(actions),
    }).toEqual(before);
    expect((await deps.db.select().from(simulatorInstances)).every((i) => i.failure === null)).toBe(true);
    // The switcher no longer offers it from another agent's pages.
    expect((await client.page("/")).html).not.toContain('value="team-b"');
  });
});
