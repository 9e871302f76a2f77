/**
 * The approvals page (issue #24, items 1 and 4) through the signed-in dashboard on real libSQL:
 * a card shows the instance (linked), GPU, $/h, state and for how long, who asked and when it
 * expires; a viewer sees no decide form, an operator does; and the two-person rule refuses the
 * asker's own approval from the dashboard too (403, still pending); an active rejection is listed
 * with a Lift form for operators (not viewers), and lifting it ends the block.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { operatorInstanceAction } from "../../jobs/operator-instance-action.ts";
import { actionBlocks, approvals } from "../../schema/index.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { csrfFrom, ORIGIN, signInCookie } from "./dashboard-client.ts";

async function setup(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", ...vars } });
  await (deps.provider as SimulatorProvider).seed(2);
  await reconcileFleet(deps, "default");
  const now = deps.clock.now();
  const ada = await createOperator(deps.db, { name: "ada", role: "operator", createdBy: "admin", now });
  const vic = await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now });
  const asked = await operatorInstanceAction(
    deps,
    { operatorId: ada.operator.id, name: "ada", role: "operator" },
    { agentId: "default", instanceId: "sim-1", kind: "destroy", idempotencyKey: "k1", via: "api" },
  );
  const app = buildApp(() => deps);
  const page = async (token: string) => {
    const cookie = await signInCookie(app, token);
    const res = await app.request(`${ORIGIN}/approvals`, { headers: { Cookie: cookie } });
    return { cookie, html: await res.text() };
  };
  return { deps, app, page, ada: ada.token, vic: vic.token, id: asked.approvalId! };
}

describe("approval cards", () => {
  it("show the context and the asker, and decide forms only for a role that may decide", async () => {
    const { page, ada, vic, id } = await setup();
    const asOperator = await page(ada);
    expect(asOperator.html).toContain('href="/fleet/sim-1"');
    expect(asOperator.html).toMatch(/GPU .* · \$\d+\.\d\d\/h · running for \d+ (s|min) · simulator/);
    expect(asOperator.html).toContain("Requested by ada");
    expect(asOperator.html).toContain("and then does nothing");
    expect(asOperator.html).toContain(`action="/approvals/${id}"`);
    const asViewer = await page(vic);
    expect(asViewer.html).not.toContain(`action="/approvals/${id}"`);
    expect(asViewer.html).toContain("deciding them needs the operator role");
  });

  it("refuse the asker's own approval of a two-person kind from the dashboard", async () => {
    const { deps, app, page, ada, id } = await setup({ APPROVAL_TWO_PERSON: "destroy" });
    const { cookie, html } = await page(ada);
    const res = await app.request(`${ORIGIN}/approvals/${id}`, {
      method: "POST",
      headers: { Cookie: cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrfFrom(html), decision: "approve" }),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("APPROVAL_TWO_PERSON");
    expect((await deps.db.select().from(approvals).where(eq(approvals.id, id)))[0]!.status).toBe("pending");
  });

  it("list rejections in force with a Lift form for operators only, and lifting ends the block", async () => {
    const { deps, app, page, ada, vic, id } = await setup();
    await decideApproval(deps, "default", id, "reject", "not yet", "ada");
    const [block] = await deps.db.select().from(actionBlocks);
    const viewer = await page(vic);
    expect(viewer.html).toContain("destroy sim-1 rejected by ada");
    expect(viewer.html).not.toContain(`/approvals/blocks/${block!.id}/lift`);
    const { cookie, html } = await page(ada);
    expect(html).toContain(`action="/approvals/blocks/${block!.id}/lift"`);
    const res = await app.request(`${ORIGIN}/approvals/blocks/${block!.id}/lift`, {
      method: "POST",
      headers: { Cookie: cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrfFrom(html) }),
    });
    expect(res.status).toBe(303);
    expect((await deps.db.select().from(actionBlocks))[0]).toMatchObject({ liftedBy: "ada" });
    expect((await page(ada)).html).toContain("No rejection blocks an action.");
  });
});
