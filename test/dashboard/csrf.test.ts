/** Every signed-in form post needs this site's origin and this session's CSRF token; nothing is written otherwise. */
import { describe, expect, it } from "vitest";
import { events } from "../../schema/index.ts";
import { getAgentState } from "../../pipeline/index.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

const countEvents = async (deps: Awaited<ReturnType<typeof createTestDeps>>) => (await deps.db.select().from(events)).length;

describe("dashboard CSRF protection", () => {
  it("accepts Trigger now with the session's token: one manual event, redirect back with a notice", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const res = await client.post("/trigger", { back: "/runs", nonce: "nonce-00000001" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/runs?done=triggered");
    const rows = await deps.db.select().from(events);
    expect(rows.map((e) => [e.source, e.priority, e.dedupKey])).toEqual([["manual", 0, "trigger:dashboard-nonce-00000001"]]);
    const again = await client.post("/trigger", { back: "/runs", nonce: "nonce-00000001" });
    expect(again.headers.get("location")).toBe("/runs?done=duplicate");
    expect(await countEvents(deps)).toBe(1);
  });

  it("rejects a post without the token, with a wrong token, or from another origin (403, nothing written)", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const missing = await client.post("/trigger", {}, { csrf: null });
    expect(missing.status).toBe(403);
    // A page in the dashboard's style, not raw JSON; a refused chat message keeps its text in the form.
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await missing.text()).toMatch(/This form was refused: invalid or missing CSRF token/);
    const chat = await client.post("/chat", { text: "keep <this> typed" }, { csrf: "f".repeat(64) });
    expect(chat.status).toBe(403);
    expect(await chat.text()).toMatch(/<textarea[^>]*>keep &lt;this&gt; typed<\/textarea>/);
    expect((await client.post("/trigger", {}, { origin: "https://evil.example" })).status).toBe(403);
    expect((await client.post("/trigger", {}, { origin: null })).status).toBe(403);
    expect((await client.post("/session/reset", { confirmed: "yes" }, { csrf: null })).status).toBe(403);
    expect(await countEvents(deps)).toBe(0);
    expect((await getAgentState(deps, "default"))!.sessionEpoch).toBe(1);
  });

  it("sends a post without a session to the sign-in page and writes nothing", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const res = await client.post("/chat", { text: "hello" }, { cookie: null });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toMatch(/^\/sign-in/);
    expect(await countEvents(deps)).toBe(0);
  });

  it("puts the CSRF token in every form of every signed-in page", async () => {
    const client = await dashboardClient(await createTestDeps());
    for (const path of ["/", "/runs", "/chat", "/wakes", "/fleet", "/notifications", "/approvals"]) {
      const { status, html } = await client.page(path);
      expect(status, path).toBe(200);
      const forms = html.match(/<form method="post"[\s\S]*?<\/form>/g) ?? [];
      expect(forms.length, path).toBeGreaterThan(0);
      for (const form of forms) expect(form, path).toContain(`name="_csrf" value="${client.csrf}"`);
    }
  });

  it("resets only after confirmation: without it the confirmation page says what reset keeps", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const ask = await client.post("/session/reset", { confirmed: "" });
    expect(ask.status).toBe(200);
    const html = await ask.text();
    expect(html).toContain("It keeps the run counter, wakes");
    expect(html).toContain('name="confirmed" value="yes"');
    expect((await getAgentState(deps, "default"))!.sessionEpoch).toBe(1);
    const done = await client.post("/session/reset", { confirmed: "yes" });
    expect(done.headers.get("location")).toBe("/?done=reset");
    expect((await getAgentState(deps, "default"))!.sessionEpoch).toBe(2);
  });
});
