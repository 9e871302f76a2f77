/**
 * PATCH /api/agents/:agent replaces the settings as a whole, but a channel URL sent back exactly
 * as the API showed it (masked) keeps the stored secret; a new URL or a dropped channel still
 * takes effect.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { agents } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

const SLACK = "https://hooks.slack.com/services/T000/B000/sEcReTtOkEn123";
const NTFY = "https://ntfy.example/alerts-s3cret";

async function setup() {
  const deps = await createTestDeps();
  const app = buildApp(() => deps);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, headers: authHeaders(), body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const stored = async (id: string) => (await deps.db.select().from(agents).where(eq(agents.id, id)))[0]!.settings as Record<string, any>;
  return { call, stored };
}

describe("PATCH with masked secrets", () => {
  it("sending back what GET showed changes the rest and keeps the stored channel URLs", async () => {
    const { call, stored } = await setup();
    await call("POST", "/api/agents", { id: "team-b", settings: { channels: { slack: SLACK, ntfy: NTFY }, debounceHumanMs: 500 } });
    const shown = (await call("GET", "/api/agents/team-b")).json;
    expect(shown.settings.channels).toEqual({ slack: "https://hooks.slack.com/…", ntfy: "https://ntfy.example/…" });
    const patched = await call("PATCH", "/api/agents/team-b", { settings: { ...shown.settings, debounceHumanMs: 900 } });
    expect(patched.status).toBe(200);
    expect(await stored("team-b")).toEqual({ channels: { slack: SLACK, ntfy: NTFY }, debounceHumanMs: 900 });
  });

  it("a new URL replaces the stored one, and a channel left out is removed", async () => {
    const { call, stored } = await setup();
    await call("POST", "/api/agents", { id: "team-b", settings: { channels: { slack: SLACK, ntfy: NTFY } } });
    const fresh = "https://hooks.slack.com/services/T000/B000/n3wT0ken";
    await call("PATCH", "/api/agents/team-b", { settings: { channels: { slack: fresh } } });
    expect(await stored("team-b")).toEqual({ channels: { slack: fresh } });
  });

  it("the mask of a different URL is not taken for the stored secret", async () => {
    const { call, stored } = await setup();
    await call("POST", "/api/agents", { id: "team-b", settings: { channels: { slack: SLACK } } });
    await call("PATCH", "/api/agents/team-b", { settings: { channels: { slack: "https://other.example/…" } } });
    expect((await stored("team-b")).channels.slack).not.toBe(SLACK);
  });
});
