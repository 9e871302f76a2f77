/**
 * The report-flood bound (issue #37 item 8e) on both hosts: one instance sending far more reports
 * than REPORTS_STORED_PER_MINUTE (60 by default; the scenario hosts do not set it) in a minute gets
 * 60 stored, and every report after them only updates its row (202 `capped`, its newest message
 * kept), on the Node host's embedded database and through the Worker's Turso client alike.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { events, instances } from "../../schema/index.ts";
import { idle, instanceWebhook, settleUntil, type ScenarioHost } from "./driver.ts";

const BOUND = 60;
const SENT = 75;

export function defineFloodScenario(getHost: () => ScenarioHost) {
  describe("one instance floods its agent with reports", () => {
    it(`stores ${BOUND} of ${SENT} reports in a minute and keeps the newest state on the row`, async () => {
      const host = getHost();
      // The bound is per minute of the clock: start early in one, so the flood fits in it.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
      const thisInstance = and(eq(instances.agentId, "default"), eq(instances.id, "sim-2"));
      const stored = () => host.db.select({ state: instances.state }).from(instances).where(thisInstance);
      if (!(await stored()).length) {
        // Run alone: the fleet is first listed by a tick (its first sightings are one run).
        host.llm.push({ text: "Noted." });
        await host.runScheduled();
        await settleUntil(host, () => idle(host));
      }
      const [before] = await stored();
      const state = before!.state;
      // Reports of sim-2 earlier scenarios stored this minute count toward the bound too.
      const [counted] = await host.db
        .select({ minute: instances.reportsMinute, n: instances.reportsInMinute })
        .from(instances)
        .where(thisInstance);
      const already = counted!.minute === Math.floor(Date.now() / 60_000) ? counted!.n : 0; // heartbeats of the stored state: no run is asked for
      const storedOf = async () => {
        const [row] = await host.db
          .select({ n: sql<number>`count(*)` })
          .from(events)
          .where(
            and(
              eq(events.agentId, "default"),
              eq(events.source, "webhook"),
              sql`json_extract(${events.payload}, '$.instanceId') = 'sim-2'`,
            ),
          );
        return Number(row!.n);
      };
      const storedBefore = await storedOf();

      const outcomes: string[] = [];
      for (let i = 1; i <= SENT; i++) {
        const res = await instanceWebhook(host, { instanceId: "sim-2", state, message: `flood ${i}` });
        expect(res.status).toBe(202);
        outcomes.push(((await res.json()) as { outcome: string }).outcome);
      }
      expect(outcomes.filter((o) => o !== "capped")).toHaveLength(BOUND - already);
      expect(outcomes.slice(BOUND - already).every((o) => o === "capped")).toBe(true);
      expect((await storedOf()) - storedBefore).toBe(BOUND - already);
      const [after] = await host.db.select({ message: instances.statusMessage }).from(instances).where(thisInstance);
      expect(after!.message).toBe(`flood ${SENT}`);
    });
  });
}
