/**
 * POST /integrations/slack/interactions — the Slack app's interactivity Request URL. Entry point
 * only: jobs/slack-interaction.ts verifies, and hands a decision to the scheduler (a durable
 * delivery, never `waitUntil`). The empty acknowledgement goes back at once (Slack waits 3 s); a
 * refusal's ephemeral response_url message (one POST, 10 s at most) follows, kept alive by the
 * Worker's `waitUntil`, or on Node as a detached promise whose errors are logged.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { handleSlackInteraction } from "../../jobs/slack-interaction.ts";

export const slackRoutes = new Hono<AppEnv>().post("/slack/interactions", async (c) => {
  const deps = c.get("deps");
  const answer = await handleSlackInteraction(deps, {
    raw: await c.req.text(),
    timestamp: c.req.header("x-slack-request-timestamp"),
    signature: c.req.header("x-slack-signature"),
  });
  if (answer.followUp) {
    const work = answer.followUp().catch((err: unknown) => deps.log.error("answering a Slack interaction failed", { error: String(err) }));
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      // Node has no execution context: the promise runs on by itself.
    }
  }
  return c.json(answer.body, answer.status);
});
