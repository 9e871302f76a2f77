/**
 * The operators page and its two form posts (add, revoke), for admins; the routes have already
 * checked origin, session, role and CSRF token. Adding answers with the page itself (not a
 * redirect) because the new token must appear exactly once and never in a URL.
 */
import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listActivity, recordActivity } from "../../auth/activity.ts";
import { createOperator, listOperators, OperatorError, revokeOperator } from "../../auth/operators-store.ts";
import { newOperatorBody } from "../../auth/operator-requests.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { agentPath } from "../shell/agent-links.ts";
import { sendPage } from "../shell/render.tsx";
import { selectedAgentId } from "../shell/selected-agent.tsx";
import { OperatorsPage } from "./operators.tsx";
import { csrfToken } from "../sign-in/session.ts";
import type { ContentfulStatusCode } from "hono/utils/http-status";

type Ctx = Context<AppEnv>;

async function render(c: Ctx, extra: { created?: { name: string; token: string }; error?: string; status?: ContentfulStatusCode } = {}) {
  const { db } = c.get("deps");
  const props = { operators: await listOperators(db), activity: await listActivity(db, 100), csrf: await csrfToken(c) };
  return sendPage(
    c,
    { title: "Operators", current: "operators", status: extra.status },
    <OperatorsPage {...props} created={extra.created} error={extra.error} />,
  );
}

export const operatorsPage = (c: Ctx) => render(c);

export async function postOperator(c: Ctx) {
  const { db, clock } = c.get("deps");
  const parsed = newOperatorBody.safeParse(await c.req.parseBody());
  if (!parsed.success) return render(c, { error: `Not added: ${describeIssues(parsed.error.issues)}.`, status: 400 });
  const who = c.get("operator");
  try {
    const { token } = await createOperator(db, { ...parsed.data, createdBy: who.name, now: clock.now() });
    await recordActivity(db, who, { action: "operator_add", subject: `${parsed.data.name} (${parsed.data.role})`, at: clock.now() });
    return render(c, { created: { name: parsed.data.name, token } });
  } catch (err) {
    if (err instanceof OperatorError) return render(c, { error: `Not added: ${err.message}.`, status: err.status });
    throw err;
  }
}

export async function postRevoke(c: Ctx) {
  const { db, clock } = c.get("deps");
  const id = z.coerce.number().int().positive().safeParse(c.req.param("operatorId"));
  if (!id.success) return render(c, { error: "Not revoked: invalid operator id.", status: 400 });
  try {
    const revoked = await revokeOperator(db, id.data, clock.now());
    await recordActivity(db, c.get("operator"), { action: "operator_revoke", subject: revoked.name, at: clock.now() });
  } catch (err) {
    if (err instanceof OperatorError) return render(c, { error: `Not revoked: ${err.message}.`, status: err.status });
    throw err;
  }
  return c.redirect(agentPath("/operators", selectedAgentId(c)), 303);
}
