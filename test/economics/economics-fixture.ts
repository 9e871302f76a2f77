/** The fleet fixture with economics columns set directly (what fleet/instances/telemetry.ts would write). */
import { and, eq } from "drizzle-orm";
import { instances, notifications } from "../../schema/index.ts";
import type { TestDeps } from "../support/test-deps.ts";

export { fleetFixture } from "../actions/fleet-fixture.ts";

export function setInstance(deps: TestDeps, id: string, values: Partial<typeof instances.$inferInsert>) {
  return deps.db
    .update(instances)
    .set(values)
    .where(and(eq(instances.agentId, "default"), eq(instances.id, id)));
}

export async function noticeTitles(deps: TestDeps): Promise<string[]> {
  const rows = await deps.db.select().from(notifications).orderBy(notifications.id);
  return rows.map((n) => n.title);
}

export const MIN = 60_000;
