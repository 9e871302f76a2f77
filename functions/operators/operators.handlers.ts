/** Handlers of /api/operators: list, create (the token is in this answer only), revoke. */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listActivity, recordActivity } from "../../auth/activity.ts";
import { createOperator, listOperators, revokeOperator } from "../../auth/operators-store.ts";
import type { Role } from "../../auth/roles.ts";

type Ctx = Context<AppEnv>;

export async function getOperators(c: Ctx) {
  const { db } = c.get("deps");
  return c.json({ operators: await listOperators(db), activity: await listActivity(db, 50) });
}

export async function postOperator(c: Ctx, name: string, role: Role) {
  const { db, clock } = c.get("deps");
  const who = c.get("operator");
  const created = await createOperator(db, { name, role, createdBy: who.name, now: clock.now() });
  await recordActivity(db, who, { action: "operator_add", subject: `${name} (${role})`, at: clock.now() });
  return c.json({ ...created, notice: "the token is shown once: store it now" }, 201);
}

export async function deleteOperator(c: Ctx, id: number) {
  const { db, clock } = c.get("deps");
  const operator = await revokeOperator(db, id, clock.now());
  await recordActivity(db, c.get("operator"), { action: "operator_revoke", subject: operator.name, at: clock.now() });
  return c.json({ operator });
}
