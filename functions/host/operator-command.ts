/**
 * `npm run operator -- …` on the Node host: add an operator (its token printed once), list them,
 * or revoke one, directly in DATABASE_URL (migrated first). Mistakes are one line and exit 1.
 *
 *   npm run operator -- add NAME --role viewer|operator|admin
 *   npm run operator -- list
 *   npm run operator -- revoke ID
 */
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { createNodeClient } from "../../db/node-client.ts";
import { parseConfig } from "../../runtime/config.ts";
import { systemClock } from "../../runtime/clock.ts";
import { recordActivity } from "../../auth/activity.ts";
import { createOperator, listOperators, revokeOperator } from "../../auth/operators-store.ts";
import { BOOTSTRAP_ADMIN, ROLES } from "../../auth/roles.ts";
import { newOperatorBody } from "../../auth/operator-requests.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { checkDatabaseFile } from "./database-checks.ts";

const USAGE = `usage: npm run operator -- add NAME --role ${ROLES.join("|")} | list | revoke ID`;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The command line's own identity in the activity log: the host's bootstrap admin, from the shell. */
const SHELL = { ...BOOTSTRAP_ADMIN, name: "admin (command line)" };

export async function runOperatorCommand(argv: readonly string[], env: Record<string, string | undefined>): Promise<string> {
  const [command, ...rest] = argv;
  if (command !== "add" && command !== "list" && command !== "revoke") throw new UsageError(USAGE);
  const config = parseConfig(env, "node");
  checkDatabaseFile(config.databaseUrl);
  const client = await createNodeClient(config.databaseUrl, config.databaseAuthToken, config.databaseSync);
  try {
    const db = openDatabase(client);
    await applyMigrations(db);
    const now = systemClock.now();
    if (command === "list") {
      const rows = await listOperators(db);
      return rows.length === 0
        ? "no operators yet"
        : rows.map((o) => `${o.id}\t${o.name}\t${o.role}\t${o.revokedAt ? `revoked ${o.revokedAt}` : "active"}`).join("\n");
    }
    if (command === "revoke") {
      const id = Number(rest[0]);
      if (!Number.isInteger(id) || id <= 0) throw new UsageError(`revoke needs an operator id (see list); ${USAGE}`);
      const revoked = await revokeOperator(db, id, now);
      await recordActivity(db, SHELL, { action: "operator_revoke", subject: revoked.name, at: now });
      return `revoked ${revoked.name}: its token and sessions no longer work`;
    }
    const roleAt = rest.indexOf("--role");
    const parsed = newOperatorBody.safeParse({ name: rest[0], role: roleAt >= 0 ? rest[roleAt + 1] : undefined });
    if (!parsed.success || rest[0]?.startsWith("--")) {
      throw new UsageError(`${parsed.success ? "name: missing" : describeIssues(parsed.error.issues)}; ${USAGE}`);
    }
    const { operator, token } = await createOperator(db, { ...parsed.data, createdBy: SHELL.name, now });
    await recordActivity(db, SHELL, { action: "operator_add", subject: `${operator.name} (${operator.role})`, at: now });
    return `added ${operator.name} (${operator.role}, id ${operator.id}). Token, shown once:\n${token}`;
  } finally {
    client.close();
  }
}
