/**
 * A Slack approval click on Workers (issue #37, item 1), in the deploy bundle under workerd with
 * the strict QStash fake delivering back to it: the click is acknowledged at once with an empty
 * 200 (Slack ignores that body: https://docs.slack.dev/interactivity/handling-user-interaction),
 * the decision is published to QStash as a `slack-decision` delivery (not run in `waitUntil`,
 * which Workers cancel 30 s after the response), and when QStash delivers it the Worker decides
 * and replaces the message through the click's response_url (a loopback receiver,
 * test/notify/slack-receiver.ts). A double click is one QStash message (its deduplication id).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOperator } from "../../auth/operators-store.ts";
import { slackSignature } from "../../auth/slack-signature.ts";
import { approvals } from "../../schema/index.ts";
import { startWorkerScenarioHost } from "../scenarios/hosts.ts";
import type { ScenarioHost } from "../scenarios/driver.ts";
import { startResponseUrl, type ResponseUrl } from "../notify/slack-receiver.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

describe("the Worker in workerd, a Slack approval click", () => {
  let host: ScenarioHost;
  let responses: ResponseUrl;

  beforeAll(async () => {
    host = await startWorkerScenarioHost({ llm: false, vars: { SLACK_SIGNING_SECRET: SECRET } });
    responses = await startResponseUrl();
  });
  afterAll(async () => {
    await host?.close();
    await responses?.close();
  });

  it("acks empty at once, decides through a QStash delivery, and replaces the message", async () => {
    const now = Date.now();
    await createOperator(host.db, { name: "ada", role: "operator", createdBy: "admin", now, slackUserId: "U0ADA" });
    const [asked] = await host.db
      .insert(approvals)
      .values({ agentId: "default", kind: "reboot", instanceId: "sim-1", reason: "stuck", requestedBy: "llm", createdAt: now })
      .returning();
    const payload = {
      type: "block_actions",
      user: { id: "U0ADA", username: "ada", team_id: "T000" },
      response_url: responses.url,
      actions: [{ type: "button", action_id: "fleetwarden_approve", block_id: `approval-${asked!.id}`, value: `default:${asked!.id}` }],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const click = async () => {
      const ts = String(Math.floor(Date.now() / 1000));
      return fetch(`${host.baseUrl}/integrations/slack/interactions`, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          "X-Slack-Request-Timestamp": ts,
          "X-Slack-Signature": await slackSignature(SECRET, ts, body),
        },
        body,
      });
    };
    const first = await click();
    const second = await click();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await first.text()).toBe("{}");
    const queued = host.qstash.messages.filter((m) => m.body.includes('"slack-decision"'));
    expect(queued).toHaveLength(1);
    expect(responses.received).toEqual([]);

    // QStash's Not-Before is whole seconds, rounded up: the delivery is due within a second.
    for (let wait = 0; queued[0]!.state !== "delivered" && wait < 50; wait++) {
      await host.qstash.drain();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(responses.rejected).toEqual([]);
    expect(responses.received).toEqual([
      { replace_original: true, text: expect.stringContaining("Approved by ada"), blocks: expect.any(Array) },
    ]);
    const [decided] = await host.db.select().from(approvals);
    expect(decided).toMatchObject({ status: "approved", decidedBy: "ada" });
  });
});
