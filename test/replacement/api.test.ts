/**
 * GET /api/agents/:agent/replacements lists replacements newest first; POST …/:id/cancel closes
 * one that has not rented yet (an approval given afterwards rents nothing), refuses one that has
 * (409), and an unknown one is a 404; nothing is written on a refusal.
 */
import { describe, expect, it } from "vitest";
import { api, deadFleet, decide, ruleRun, rows } from "./support.ts";

describe("replacements API", () => {
  it("lists, cancels before renting (a later approval rents nothing), refuses after", async () => {
    const { deps, sim } = await deadFleet();
    await ruleRun(deps);
    const listed = await (await api(deps, "/api/agents/default/replacements")).json();
    expect(listed.replacements).toEqual([expect.objectContaining({ oldInstanceId: "sim-1", status: "awaiting_approval" })]);
    const id = listed.replacements[0].id;

    expect((await api(deps, "/api/agents/default/replacements/999/cancel", { method: "POST" })).status).toBe(404);
    const cancel = await api(deps, `/api/agents/default/replacements/${id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toMatchObject({ status: "cancelled" });
    await decide(deps, "approve");
    expect((await sim.list()).filter((i) => i.id.startsWith("sim-on-"))).toEqual([]);
    expect(await rows(deps)).toHaveLength(1);

    const again = await api(deps, `/api/agents/default/replacements/${id}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
    expect((await again.json()).error).toMatch(/is cancelled/);
  });
});
