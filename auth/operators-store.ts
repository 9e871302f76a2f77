/**
 * Named operators: created with a role and a fresh token (returned once, stored only as its
 * hash), listed without secrets, and revoked (which also revokes every session they hold).
 * Resolving a presented token to its principal is the only way in besides ADMIN_TOKEN.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { operators, operatorSessions } from "../schema/index.ts";
import { BOOTSTRAP_ADMIN, isRole, type Principal, type Role } from "./roles.ts";
import { randomToken, sameSecret, sha256Hex } from "./secrets.ts";

export const OPERATOR_TOKEN_PREFIX = "fwo_";

export class OperatorError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = "OperatorError";
  }
}

type OperatorRow = typeof operators.$inferSelect;

export function presentOperator(row: OperatorRow) {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt).toISOString(),
    revokedAt: row.revokedAt === null ? null : new Date(row.revokedAt).toISOString(),
    /** The Slack user who is this operator when deciding from Slack. */
    slackUserId: row.slackUserId,
  };
}

/** Creates an operator; the token is in the answer and nowhere else. 409 when the name is taken. */
export async function createOperator(
  db: Db,
  input: { name: string; role: Role; createdBy: string; now: number; slackUserId?: string | undefined },
) {
  if (input.name.toLowerCase() === BOOTSTRAP_ADMIN.name)
    throw new OperatorError(409, `operator name "${input.name}" is reserved for the ADMIN_TOKEN holder`);
  if (input.slackUserId) await refuseTakenSlackUser(db, input.slackUserId, null);
  const token = randomToken(OPERATOR_TOKEN_PREFIX);
  const [row] = await db
    .insert(operators)
    .values({
      name: input.name,
      role: input.role,
      tokenHash: await sha256Hex(token),
      createdBy: input.createdBy,
      createdAt: input.now,
      slackUserId: input.slackUserId ?? null,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new OperatorError(409, `an operator named "${input.name}" already exists`);
  return { operator: presentOperator(row), token };
}

export async function listOperators(db: Db) {
  return (await db.select().from(operators).orderBy(asc(operators.id))).map(presentOperator);
}

/** Revokes the operator's token and every session it holds, in one batch. 404 when unknown. */
export async function revokeOperator(db: Db, id: number, now: number) {
  const [revoked, , existing] = await db.batch([
    db
      .update(operators)
      .set({ revokedAt: now })
      .where(and(eq(operators.id, id), isNull(operators.revokedAt)))
      .returning(),
    db
      .update(operatorSessions)
      .set({ revokedAt: now })
      .where(and(eq(operatorSessions.operatorId, id), isNull(operatorSessions.revokedAt))),
    db.select().from(operators).where(eq(operators.id, id)),
  ]);
  const row = revoked[0] ?? existing[0];
  if (!row) throw new OperatorError(404, `unknown operator: ${id}`);
  return presentOperator(row);
}

/** The principal a presented token stands for: ADMIN_TOKEN or a live operator's token. */
export async function principalForToken(db: Db, adminToken: string | undefined, given: string): Promise<Principal | null> {
  if (await sameSecret(given, adminToken)) return BOOTSTRAP_ADMIN;
  if (!given.startsWith(OPERATOR_TOKEN_PREFIX)) return null;
  const [row] = await db
    .select()
    .from(operators)
    .where(and(eq(operators.tokenHash, await sha256Hex(given)), isNull(operators.revokedAt)));
  return row && isRole(row.role) ? { operatorId: row.id, name: row.name, role: row.role } : null;
}

/** The principal of a live session's operator id (the operator may have been revoked since). */
export async function principalForId(db: Db, operatorId: number): Promise<Principal | null> {
  if (operatorId === BOOTSTRAP_ADMIN.operatorId) return BOOTSTRAP_ADMIN;
  const [row] = await db
    .select()
    .from(operators)
    .where(and(eq(operators.id, operatorId), isNull(operators.revokedAt)));
  return row && isRole(row.role) ? { operatorId: row.id, name: row.name, role: row.role } : null;
}

async function refuseTakenSlackUser(db: Db, slackUserId: string, self: number | null) {
  const [taken] = await db.select({ id: operators.id, name: operators.name }).from(operators).where(eq(operators.slackUserId, slackUserId));
  if (taken && taken.id !== self) throw new OperatorError(409, `Slack user ${slackUserId} is already operator "${taken.name}"`);
}

/** Changes an operator's Slack user (null unmaps it) and/or role. 404 unknown, 409 a Slack user taken. */
export async function updateOperator(db: Db, id: number, change: { slackUserId?: string | null | undefined; role?: Role | undefined }) {
  if (change.slackUserId) await refuseTakenSlackUser(db, change.slackUserId, id);
  const set = {
    ...(change.slackUserId !== undefined ? { slackUserId: change.slackUserId } : {}),
    ...(change.role ? { role: change.role } : {}),
  };
  let row: OperatorRow | undefined;
  try {
    [row] = await db.update(operators).set(set).where(eq(operators.id, id)).returning();
  } catch (err) {
    // Two requests mapping one Slack user at once: the unique index decides.
    if (/UNIQUE/i.test(String(err))) throw new OperatorError(409, `Slack user ${change.slackUserId} is already another operator`);
    throw err;
  }
  if (!row) throw new OperatorError(404, `unknown operator: ${id}`);
  return presentOperator(row);
}

/** The live operator a Slack user is (revoked operators are nobody); null when unmapped. */
export async function principalForSlackUser(db: Db, slackUserId: string): Promise<Principal | null> {
  const [row] = await db
    .select()
    .from(operators)
    .where(and(eq(operators.slackUserId, slackUserId), isNull(operators.revokedAt)));
  return row && isRole(row.role) ? { operatorId: row.id, name: row.name, role: row.role } : null;
}
