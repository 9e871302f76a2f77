/**
 * Attack: a host blips offline long enough for a replacement to be approved; by the time the new
 * instance runs, the old one is back (running, or booting again), and the replacement destroys it
 * anyway, with whatever it was doing, because it never re-checked it was still dead.
 * Guard: fleet/replacement/replacement.ts `finish` re-reads the old instance right before its
 * destroy and destroys it only if it is still dead (or already gone, e.g. its human replaced it);
 * back up, it is left alone, the replacement fails and a human is told once to decide which to keep.
 */
import { afterEach, describe, expect, it } from "vitest";
import { notifications } from "../../schema/index.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import type { VastServer } from "../fleet/vast-server.ts";
import { deadOnVast, decide, rows, tick } from "../replacement/support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("the old instance is re-read before it is destroyed", () => {
  for (const back of [
    { actual_status: "running", cur_state: "running", says: /running again/ },
    { actual_status: "loading", cur_state: "running", says: /loading, coming up again/ },
  ])
    it(`an old instance back to ${back.actual_status} is not destroyed; a human is told`, async () => {
      const apiKey = "vast-test-key-back";
      const { deps, server } = await deadOnVast({ apiKey });
      servers.push(server);
      await proposeReplacement(deps, { agentId: "default", runId: null, decidedBy: "rules" }, "1");
      await decide(deps, "approve");
      expect((await tick(deps)).steps[0]!.outcome).toBe("created");

      Object.assign(server.instances.get(1)!, { actual_status: back.actual_status, cur_state: back.cur_state }); // the host came back
      server.boot(server.created[0]!);
      expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
      expect(server.instances.has(1)).toBe(true);
      expect((await rows(deps))[0]!.error).toMatch(back.says);
      const told = (await deps.db.select().from(notifications)).filter((n) => /failed/.test(n.title));
      expect(told).toEqual([expect.objectContaining({ instanceId: "1", body: expect.stringMatching(back.says) })]);
      await tick(deps);
      expect(server.instances.has(1)).toBe(true);
    });
});
