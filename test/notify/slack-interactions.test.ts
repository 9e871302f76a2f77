/**
 * Approving from Slack (issue #24, item 5) through the app over real libSQL, the simulator and
 * strict loopback stand-ins for Slack (test/notify/receiver.ts for the incoming webhook,
 * test/notify/slack-receiver.ts for response_url): the approval's Slack message carries valid
 * Block Kit buttons; a click signed with SLACK_SIGNING_SECRET (computed here, as Slack does)
 * decides as the mapped operator, the action runs once and the buttons are replaced naming who
 * decided; a stale timestamp, a wrong secret, a tampered body and no secret are refused and
 * decide nothing; an unmapped or viewer Slack user decides nothing (ephemeral); a replayed click
 * decides nothing new; a rejection blocks the action (it sticks); ntfy gets a view action.
 *
 * Issue #37, item 1: Slack ignores the body of a block_actions acknowledgement
 * (https://docs.slack.dev/interactivity/handling-user-interaction, "Acknowledgment response": the
 * acknowledgement is an HTTP 200; "Message responses": what the user sees is POSTed to
 * response_url, `response_type: "ephemeral"` for the clicker alone, `replace_original: true` to
 * replace the message). So these tests read only what the loopback response_url receives, and
 * the decision runs as a durable delivery of the real local scheduler (never in `waitUntil`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { slackSignature } from "../../auth/slack-signature.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { deliverNotification } from "../../notify/deliver-notification.ts";
import { actionBlocks, actions, approvals, deliveries, notificationDeliveries } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDb, createTestDeps } from "../support/test-deps.ts";
import { LocalScheduler } from "../../pipeline/index.ts";
import { deliveryBodySchema, handleDelivery } from "../../jobs/deliver.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { startReceiver } from "./receiver.ts";
import { startResponseUrl } from "./slack-receiver.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const open: { close(): Promise<void> }[] = [];
const schedulers: LocalScheduler[] = [];
const gates: (() => void)[] = [];
afterEach(async () => {
  for (const open of gates.splice(0)) open();
  await settled();
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function setup(vars: Record<string, string> = {}) {
  const slack = await startReceiver("/services/T000/B000/XXX", 200, "slack");
  const ntfy = await startReceiver("/fleet", 200, "ntfy");
  const responses = await startResponseUrl();
  open.push(slack, ntfy, responses);
  const db = await createTestDb();
  const base = await createTestDeps({
    db,
    vars: {
      SIMULATOR_FAILURE_RATE: "0",
      SLACK_SIGNING_SECRET: SECRET,
      ALLOW_PRIVATE_URLS: "true",
      SLACK_WEBHOOK_URL: slack.url,
      NTFY_URL: ntfy.url,
      PUBLIC_URL: "https://fw.example",
      ...vars,
    },
  });
  // The Node host's real scheduler (durable deliveries table, its own timer), as functions/host/node-host.ts runs it.
  const scheduler = new LocalScheduler({ db, clock: base.clock, log: silentLogger, visibilityMs: 60_000, maxSleepMs: 3_600_000 });
  const deps = { ...base, scheduler };
  await (deps.provider as SimulatorProvider).seed(2);
  await reconcileFleet(deps, "default");
  const now = deps.clock.now();
  await createOperator(deps.db, { name: "ada", role: "operator", createdBy: "admin", now, slackUserId: "U0ADA" });
  await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now, slackUserId: "U0VIC" });
  const asked = await executeAction(deps, {
    agentId: "default",
    runId: 2,
    instanceId: "sim-2",
    kind: "destroy",
    decidedBy: "llm",
    idempotencyKey: "r2:destroy",
    reason: "broken for hours",
  });
  for (const d of await deps.db.select().from(notificationDeliveries)) await deliverNotification(deps, d.id);
  await scheduler.start((body) => handleDelivery(deps, body));
  schedulers.push(scheduler);
  await scheduler.settle();
  const app = buildApp(() => deps);
  const id = asked.approvalId!;
  return { deps, app, slack, ntfy, responses, id, scheduler };
}

function clickBody(approvalId: number, user: string, actionId: string, responseUrl: string) {
  const payload = {
    type: "block_actions",
    user: { id: user, username: user.toLowerCase(), team_id: "T000" },
    api_app_id: "A000",
    container: { type: "message", message_ts: "1700000000.000100", channel_id: "C000", is_ephemeral: false },
    trigger_id: "1234.5678.abcd",
    response_url: responseUrl,
    actions: [
      {
        type: "button",
        action_id: actionId,
        block_id: `approval-${approvalId}`,
        value: `default:${approvalId}`,
        action_ts: "1700000001.000200",
      },
    ],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

async function signed(app: ReturnType<typeof buildApp>, body: string, at: number, secret = SECRET, sentBody = body) {
  const ts = String(Math.floor(at / 1000));
  return app.request(
    "/integrations/slack/interactions",
    {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": await slackSignature(secret, ts, body),
      },
      body: sentBody,
    },
    undefined,
    executionCtx,
  );
}

/**
 * The work each answer leaves running after it (the decision and the response_url message), handed
 * to the Worker's `waitUntil` as on Workers: a test awaits it instead of sleeping, so "nothing was
 * posted" is checked after the work finished, not after a guess at how long it takes.
 */
const followUps: Promise<unknown>[] = [];
const executionCtx = { waitUntil: (work: Promise<unknown>) => void followUps.push(work), passThroughOnException: () => {}, props: {} };
async function settled() {
  while (followUps.length > 0) await Promise.all(followUps.splice(0));
}

/** The slack-decision deliveries the scheduler holds. */
const slackDeliveries = async (deps: { db: Awaited<ReturnType<typeof createTestDb>> }) =>
  (await deps.db.select().from(deliveries)).filter((d) => (d.body as { type: string }).type === "slack-decision");

describe("Slack approval buttons", () => {
  it("sends Block Kit buttons Slack accepts, and ntfy a view action to the approval page", async () => {
    const { slack, ntfy, id } = await setup();
    expect(slack.rejected).toEqual([]);
    const sent = JSON.parse(slack.received[0]!.body) as {
      text: string;
      blocks: { type: string; elements?: { action_id: string; value: string; style: string }[] }[];
    };
    expect(sent.text).toContain("Approval needed: destroy sim-2");
    const buttons = sent.blocks.find((b) => b.type === "actions")!.elements!;
    expect(buttons.map((b) => [b.action_id, b.value, b.style])).toEqual([
      ["fleetwarden_approve", `default:${id}`, "primary"],
      ["fleetwarden_reject", `default:${id}`, "danger"],
    ]);
    expect(ntfy.received[0]!.headers.actions).toBe(`view, Open approval, https://fw.example/approvals?agent=default#approval-${id}`);
  });
});

describe("POST /integrations/slack/interactions", () => {
  it("approves as the mapped operator once, replaces the buttons naming them, and a replay decides nothing new", async () => {
    const { deps, app, responses, id, scheduler } = await setup();
    const body = clickBody(id, "U0ADA", "fleetwarden_approve", responses.url);
    const res = await signed(app, body, deps.clock.now());
    expect(res.status).toBe(200);
    expect(followUps).toEqual([]); // the decision is a scheduled delivery, not the Worker's waitUntil
    await scheduler.settle();
    expect(responses.rejected).toEqual([]);
    expect(responses.received[0]).toMatchObject({ replace_original: true, text: expect.stringContaining("Approved by ada") });
    const [row] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
    expect(row).toMatchObject({ status: "approved", decidedBy: "ada" });
    expect(await deps.provider.get("sim-2")).toBeNull();

    const again = await signed(app, body, deps.clock.now());
    expect(again.status).toBe(200);
    await settled();
    await scheduler.settle();
    expect(responses.received).toHaveLength(2);
    expect(responses.received[1]).toEqual({
      response_type: "ephemeral",
      replace_original: false,
      text: expect.stringContaining("already approved by ada"),
    });
    expect((await deps.db.select().from(actions).where(eq(actions.decidedBy, "human"))).length).toBe(1);
    expect(await slackDeliveries(deps)).toHaveLength(1);
  });

  it("rejects as the operator, and the rejection blocks the action", async () => {
    const { deps, app, responses, id, scheduler } = await setup();
    expect((await signed(app, clickBody(id, "U0ADA", "fleetwarden_reject", responses.url), deps.clock.now())).status).toBe(200);
    await scheduler.settle();
    expect(responses.received[0]!.text).toContain("Rejected by ada");
    expect((await deps.db.select().from(approvals))[0]!.status).toBe("rejected");
    expect(await deps.db.select().from(actionBlocks)).toHaveLength(1);
    expect(await deps.provider.get("sim-2")).not.toBeNull();
  });

  it("refuses a stale timestamp, a wrong secret and a tampered body with 401, and answers 503 without a secret", async () => {
    const { deps, app, responses, id } = await setup();
    const body = clickBody(id, "U0ADA", "fleetwarden_approve", responses.url);
    const stale = await signed(app, body, deps.clock.now() - 6 * 60_000);
    expect(stale.status).toBe(401);
    expect((await stale.json()).error).toMatch(/5 minutes/);
    expect((await signed(app, body, deps.clock.now(), "not-the-signing-secret")).status).toBe(401);
    const tampered = clickBody(id, "U0ADA", "fleetwarden_approve", responses.url).replace("U0ADA", "U0ADB");
    expect((await signed(app, body, deps.clock.now(), SECRET, tampered)).status).toBe(401);
    const none = await app.request("/integrations/slack/interactions", { method: "POST", body });
    expect(none.status).toBe(401);
    expect((await deps.db.select().from(approvals))[0]!.status).toBe("pending");

    const unset = await setup({ SLACK_SIGNING_SECRET: "" });
    const res = await signed(unset.app, clickBody(unset.id, "U0ADA", "fleetwarden_approve", responses.url), unset.deps.clock.now());
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatch(/SLACK_SIGNING_SECRET/);
  });

  it("an unmapped or viewer Slack user decides nothing and is told ephemerally", async () => {
    const { deps, app, responses, id } = await setup();
    for (const [user, said] of [
      ["U0NOBODY", /not a fleetwarden operator/],
      ["U0VIC", /vic is a viewer/],
    ] as const) {
      const res = await signed(app, clickBody(id, user, "fleetwarden_approve", responses.url), deps.clock.now());
      expect(res.status).toBe(200);
      await settled();
      expect(responses.received.at(-1)).toEqual({ response_type: "ephemeral", replace_original: false, text: expect.stringMatching(said) });
    }
    expect(responses.received).toHaveLength(2);
    expect(responses.rejected).toEqual([]);
    expect(await slackDeliveries(deps)).toEqual([]);
    expect((await deps.db.select().from(approvals))[0]!.status).toBe("pending");
  });

  it("decides but never posts to a response_url that is not Slack's", async () => {
    const { deps, app, responses, id, scheduler } = await setup({ ALLOW_PRIVATE_URLS: "false" });
    expect((await signed(app, clickBody(id, "U0ADA", "fleetwarden_reject", responses.url), deps.clock.now())).status).toBe(200);
    await settled();
    await scheduler.settle();
    expect((await deps.db.select().from(approvals))[0]!.status).toBe("rejected");
    expect(responses.received).toEqual([]);
  });

  function resolvers() {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  }

  /** Holds the simulator's destroy at a gate, as a slow provider call (up to 4 × 30 s on a real one). */
  function gateDestroy(deps: { provider: unknown }) {
    const sim = deps.provider as SimulatorProvider;
    const destroy = sim.destroy.bind(sim);
    const gate = { calls: 0, reached: resolvers(), open: resolvers() };
    gates.push(() => gate.open.resolve());
    sim.destroy = async (instanceId: string) => {
      gate.calls++;
      gate.reached.resolve();
      await gate.open.promise;
      return destroy(instanceId);
    };
    return gate;
  }

  it("acknowledges at once while the provider works, and updates the message when it is done", async () => {
    const { deps, app, responses, id, scheduler } = await setup();
    const gate = gateDestroy(deps);
    const res = await signed(app, clickBody(id, "U0ADA", "fleetwarden_approve", responses.url), deps.clock.now());
    expect(res.status).toBe(200);
    expect(followUps).toEqual([]); // nothing left to waitUntil: the decision is the scheduler's
    await gate.reached.promise; // the scheduler's own timer started the decision: nothing here drove it
    expect(responses.received).toEqual([]);
    expect(await deps.provider.get("sim-2")).not.toBeNull();

    gate.open.resolve();
    await scheduler.settle();
    expect(responses.rejected).toEqual([]);
    expect(responses.received).toEqual([
      { replace_original: true, text: expect.stringContaining("Approved by ada"), blocks: expect.any(Array) },
    ]);
    expect(await deps.provider.get("sim-2")).toBeNull();
    expect(await slackDeliveries(deps)).toEqual([expect.objectContaining({ status: "delivered", attempts: 1 })]);
  });

  it("a double click is one delivery and one decision (dedup key: approval and Slack user)", async () => {
    const { deps, app, responses, id, scheduler } = await setup();
    const gate = gateDestroy(deps);
    await scheduler.stop(); // both clicks land before the first is delivered
    const body = clickBody(id, "U0ADA", "fleetwarden_approve", responses.url);
    expect((await signed(app, body, deps.clock.now())).status).toBe(200);
    expect((await signed(app, body, deps.clock.now())).status).toBe(200);
    const [queued] = await slackDeliveries(deps);
    expect(await slackDeliveries(deps)).toHaveLength(1);
    // The body QStash would carry to POST /internal/deliveries on Workers passes its schema as is.
    expect(deliveryBodySchema.parse(queued!.body)).toEqual({
      type: "slack-decision",
      agentId: "default",
      approvalId: id,
      decision: "approve",
      slackUser: "U0ADA",
      responseUrl: responses.url,
    });
    gate.open.resolve();
    await scheduler.start((delivery) => handleDelivery(deps, delivery));
    await scheduler.settle();
    expect(gate.calls).toBe(1);
    expect(responses.received).toEqual([
      { replace_original: true, text: expect.stringContaining("Approved by ada"), blocks: expect.any(Array) },
    ]);
    expect((await deps.db.select().from(actions).where(eq(actions.decidedBy, "human"))).length).toBe(1);
  });

  it("an expired approval and the two-person rule are refused privately through response_url, deciding nothing", async () => {
    const { deps, app, responses, id, scheduler } = await setup({ APPROVAL_TWO_PERSON: "destroy" });
    await deps.db.update(approvals).set({ requestedByOperator: "ada" }).where(eq(approvals.id, id));
    expect((await signed(app, clickBody(id, "U0ADA", "fleetwarden_approve", responses.url), deps.clock.now())).status).toBe(200);
    await scheduler.settle();
    expect(responses.received).toEqual([
      { response_type: "ephemeral", replace_original: false, text: expect.stringMatching(/Nothing was decided.*needs a second person/) },
    ]);
    expect(responses.received[0]!.text).not.toContain("Approved");

    const later = await startResponseUrl();
    open.push(later);
    await createOperator(deps.db, { name: "bob", role: "operator", createdBy: "admin", now: deps.clock.now(), slackUserId: "U0BOB" });
    await deps.db
      .update(approvals)
      .set({ expiresAt: deps.clock.now() - 1 })
      .where(eq(approvals.id, id));
    expect((await signed(app, clickBody(id, "U0BOB", "fleetwarden_approve", later.url), deps.clock.now())).status).toBe(200);
    await scheduler.settle();
    expect(later.received).toEqual([{ response_type: "ephemeral", replace_original: false, text: expect.stringMatching(/expired/) }]);
    expect((await deps.db.select().from(approvals))[0]!.status).toBe("pending");
    expect(await deps.provider.get("sim-2")).not.toBeNull();
  });

  it("refuses a body that is not a block_actions payload with 400, deciding nothing", async () => {
    const { deps, app } = await setup();
    const res = await signed(app, "payload=%7B%22type%22%3A%22view_submission%22%7D", deps.clock.now());
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/block_actions/);
  });
});
