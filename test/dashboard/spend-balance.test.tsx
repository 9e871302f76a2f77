/** The overview's spend panel names the provider balance the balance check read, and the hours it lasts. */
import { describe, expect, it } from "vitest";
import { SpendPanel } from "../../dashboard/overview/spend-panel.tsx";
import type { Spend } from "../../jobs/read-models/spend.ts";

const spend: Spend = { today: 3, limit: null, days: [{ day: "2026-01-01", usd: 3 }], byInstance: new Map() };

describe("the spend panel's balance line", () => {
  it("shows the balance, the hours left at the current burn and when it was read", async () => {
    const html = String(
      await (<SpendPanel spend={spend} balance={{ usd: 30, hoursLeft: 15, at: "2026-01-01T12:00:00.000Z" }} />).toString(),
    );
    expect(html).toContain("Provider balance $30.00, about 15 h at the current burn (read 12:00 UTC).");
  });

  it("shows nothing when no balance was read (or the provider has no balance API)", async () => {
    const html = String(await (<SpendPanel spend={spend} balance={null} />).toString());
    expect(html).not.toContain("Provider balance");
  });
});
