/**
 * Attack: several unfiltered agents share one Vast.ai account; each sees the same dead instance
 * and each rents a replacement for it, so one death is paid for twice (or more) and the old one is
 * destroyed by the first while the others' rentals run on.
 * Guard: the replacement row carries the provider account (fleet/providers/provider-account.ts:
 * kind and a fingerprint of the key, never the key); another agent's proposal for the same death
 * finds it and answers `elsewhere` without filing anything or calling the provider, and the
 * unique index `replacements_account_open` settles two proposals at once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { approvals, replacements } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { providerAccount } from "../../fleet/providers/provider-account.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import type { TestDeps } from "../support/test-deps.ts";
import type { VastServer } from "../fleet/vast-server.ts";
import { deadOnVast, decide } from "../replacement/support.ts";
import { createAgent, scopedDeps, scopedTick } from "./support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const apiKey = "vast-test-key-shared";

/** Two agents, `default` and `team-b`, on the host's one Vast.ai account; both have seen instance 1 go offline. */
async function sharedDeath() {
  const { deps, server } = await deadOnVast({ apiKey, agentIds: ["default", "team-b"] }, createAgent);
  servers.push(server);
  return { deps, server };
}

const propose = async (deps: TestDeps, agentId: string) =>
  proposeReplacement(await scopedDeps(deps, agentId), { agentId, runId: null, decidedBy: "rules" }, "1");

describe("one death, one rental per provider account", () => {
  it("the second agent's proposal answers elsewhere: nothing filed, no provider call, exactly one create", async () => {
    const { deps, server } = await sharedDeath();
    expect(await propose(deps, "default")).toMatchObject({ status: "proposed", result: { status: "awaiting_approval" } });
    await decide(deps, "approve");

    const calls = server.requests.length;
    const second = await propose(deps, "team-b");
    expect(second).toMatchObject({ status: "elsewhere", detail: expect.stringMatching(/agent default/) });
    expect(server.requests.length).toBe(calls);
    expect(await deps.db.select().from(approvals)).toHaveLength(1);

    for (let i = 0; i < 3; i++) {
      await scopedTick(deps, "default");
      await scopedTick(deps, "team-b");
      await propose(deps, "team-b");
    }
    server.boot(server.created[0]!);
    await scopedTick(deps, "default");
    await propose(deps, "team-b"); // the old one is gone now: still replaced there, not here
    expect(server.created).toHaveLength(1);
    const rows = await deps.db.select().from(replacements);
    expect(rows).toEqual([expect.objectContaining({ agentId: "default", status: "done", account: await providerAccount(deps.provider) })]);
    expect(rows[0]!.account).toMatch(/^vast:[0-9a-f]{16}$/);
    expect(rows[0]!.account).not.toContain(apiKey);
  });

  it("two proposals at once: one row, the other elsewhere", async () => {
    const { deps } = await sharedDeath();
    const both = await Promise.all([propose(deps, "default"), propose(deps, "team-b")]);
    expect(both.map((p) => p.status).sort()).toEqual(["elsewhere", "proposed"]);
    expect(await deps.db.select().from(replacements)).toHaveLength(1);
    expect(await deps.db.select().from(approvals)).toHaveLength(1);
  });

  it("another account is another account: an agent on a different key rents its own", async () => {
    const { deps } = await sharedDeath();
    const other = new VastProvider({ apiKey: "another-key", baseUrl: "http://127.0.0.1:1", sleep: async () => {} });
    expect(await providerAccount(other)).not.toBe(await providerAccount(deps.provider));
  });
});
