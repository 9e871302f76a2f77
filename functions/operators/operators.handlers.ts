/**
 * Handlers of /api/operators: list, create (the token is in this answer only), revoke. The
 * store's OperatorError (a taken name, an unknown id) is the caller's to fix and is answered as a
 * RequestError with its status; nothing else from the store becomes a client status.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { listActivity, recordActivity } from "../../auth/activity.ts";
import { createOperator, listOperators, OperatorError, revokeOperator, updateOperator } from "../../auth/operators-store.ts";
import type { Role } from "../../auth/roles.ts";

type Ctx = Context<AppEnv>;

export async function getOperators(c: Ctx) {
  const { db } = c.get("deps");
  return c.json({ operators: await listOperators(db), activity: await listActivity(db, 50) });
}

export async function postOperator(c: Ctx, name: string, role: Role, slackUserId?: string) {
  const { db, clock } = c.get("deps");
  const who = c.get("operator");
  const created = await asRequestError(createOperator(db, { name, role, createdBy: who.name, now: clock.now(), slackUserId }));
  await recordActivity(db, who, { action: "operator_add", subject: `${name} (${role})`, at: clock.now() });
  return c.json({ ...created, notice: "the token is shown once: store it now" }, 201);
}

export async function patchOperator(c: Ctx, id: number, change: { slackUserId?: string | null | undefined; role?: Role | undefined }) {
  const { db, clock } = c.get("deps");
  const operator = await asRequestError(updateOperator(db, id, change));
  await recordActivity(db, c.get("operator"), {
    action: "operator_change",
    subject: `${operator.name} (${operator.role}, slack ${operator.slackUserId ?? "none"})`,
    at: clock.now(),
  });
  return c.json({ operator });
}

export async function deleteOperator(c: Ctx, id: number) {
  const { db, clock } = c.get("deps");
  const operator = await asRequestError(revokeOperator(db, id, clock.now()));
  await recordActivity(db, c.get("operator"), { action: "operator_revoke", subject: operator.name, at: clock.now() });
  return c.json({ operator });
}

async function asRequestError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof OperatorError) throw new RequestError(err.status, err.message);
    throw err;
  }
}
