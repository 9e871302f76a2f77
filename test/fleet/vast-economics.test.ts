/**
 * The Vast.ai client reads the economics fields vast-cli names (gpu_util, disk_usage/disk_space,
 * dph_total, storage_total_cost, end_date, is_bid) from the list it already fetches, over real
 * HTTP from the strict fake, and tells a stop by a higher bid from a stop its owner asked for.
 */
import { describe, expect, it } from "vitest";
import { outbidRow, vastInstance } from "./vast-server.ts";
import { useVastClient } from "./vast-client-fixture.ts";

const client = useVastClient("vast-econ-key");

describe("Vast.ai client: economics fields", () => {
  it("reads utilisation, disk use, running and stopped cost, contract end and interruptibility", async () => {
    const { vast } = await client({
      instances: [
        vastInstance(201, {
          gpu_util: 3.25,
          disk_space: 80,
          disk_usage: 60,
          dph_total: 1.2021,
          storage_total_cost: 0.0021,
          end_date: 1770000000.5,
          is_bid: true,
        }),
      ],
    });
    const [one] = await vast.list();
    expect(one).toMatchObject({
      state: "running",
      gpuUtil: 3.3,
      diskUsedPct: 75,
      pricePerHour: 1.2021,
      storagePerHour: 0.0021,
      endsAt: 1770000000500,
      interruptible: true,
      stopReason: null,
    });
  });

  it("fields Vast leaves out or sends out of range are null, never a guess", async () => {
    const { vast } = await client({
      instances: [
        vastInstance(202, {
          gpu_util: null,
          disk_space: 0,
          disk_usage: 5,
          storage_total_cost: undefined,
          end_date: null,
          is_bid: undefined,
        }),
        vastInstance(203, { gpu_util: 140 }),
      ],
    });
    const [a, b] = await vast.list();
    expect(a).toMatchObject({ gpuUtil: null, diskUsedPct: null, storagePerHour: null, endsAt: null, interruptible: null });
    expect(b!.gpuUtil).toBeNull();
  });

  it("an interruptible instance stopped while meant to run is stopped by a higher bid: stopReason outbid", async () => {
    const { vast } = await client({ instances: [outbidRow(301), vastInstance(302, { is_bid: true })] });
    const [outbid, running] = await vast.list();
    expect(outbid).toMatchObject({ id: "301", state: "stopped", interruptible: true, stopReason: "outbid" });
    expect(running).toMatchObject({ state: "running", stopReason: null });
  });

  it("a stop its owner asked for is not an outbid, even for an interruptible instance", async () => {
    const { vast } = await client({ instances: [vastInstance(303, { is_bid: true })] });
    await vast.stop("303");
    const seen = await vast.get("303");
    expect(seen).toMatchObject({ state: "stopped", interruptible: true, stopReason: null });
  });
});
