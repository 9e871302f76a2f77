/**
 * The Slack user of an operator (issue #24, item 5) through /api/operators on real libSQL:
 * POST takes an optional slackUserId, PATCH /:id sets, changes or unmaps it (null) and the role;
 * a malformed id is a 400 naming the field, a Slack user already mapped a 409, an unknown operator
 * a 404, and none of them writes anything; a revoked operator is nobody in Slack.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { principalForSlackUser } from "../../auth/operators-store.ts";
import { operators } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function setup() {
  const deps = await createTestDeps();
  const app = buildApp(() => deps);
  const call = (method: string, path: string, body?: unknown) =>
    app.request(`/api/operators${path}`, { method, headers: authHeaders(), ...(body ? { body: JSON.stringify(body) } : {}) });
  return { deps, call };
}

describe("operators' Slack users", () => {
  it("maps on create and on PATCH, refuses duplicates and bad ids, and unmaps with null", async () => {
    const { deps, call } = await setup();
    const ada = await call("POST", "", { name: "ada", role: "operator", slackUserId: "U024BE7LH" });
    expect(ada.status).toBe(201);
    const adaId = (await ada.json()).operator.id as number;
    const bob = (await (await call("POST", "", { name: "bob", role: "viewer" })).json()).operator.id as number;

    const dup = await call("POST", "", { name: "cy", role: "operator", slackUserId: "U024BE7LH" });
    expect(dup.status).toBe(409);
    expect((await dup.json()).error).toMatch(/U024BE7LH is already operator "ada"/);
    const bad = await call("PATCH", `/${bob}`, { slackUserId: "not-a-slack-id" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/slackUserId/);
    expect((await call("PATCH", `/${bob}`, { slackUserId: "U024BE7LH" })).status).toBe(409);
    expect((await call("PATCH", `/${bob}`, {})).status).toBe(400);
    expect((await call("PATCH", "/999", { slackUserId: "W0123ABC" })).status).toBe(404);
    expect((await deps.db.select().from(operators)).map((o) => [o.name, o.slackUserId])).toEqual([
      ["ada", "U024BE7LH"],
      ["bob", null],
    ]);

    const changed = await call("PATCH", `/${bob}`, { slackUserId: "W0123ABC", role: "operator" });
    expect((await changed.json()).operator).toMatchObject({ name: "bob", role: "operator", slackUserId: "W0123ABC" });
    expect(await principalForSlackUser(deps.db, "W0123ABC")).toMatchObject({ name: "bob", role: "operator" });
    expect((await call("PATCH", `/${adaId}`, { slackUserId: null })).status).toBe(200);
    expect(await principalForSlackUser(deps.db, "U024BE7LH")).toBeNull();

    await call("DELETE", `/${bob}`);
    expect(await principalForSlackUser(deps.db, "W0123ABC")).toBeNull();
  });
});
