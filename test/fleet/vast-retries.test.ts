/**
 * What the Vast.ai client repeats, against the strict fake counting every request
 * (test/fleet/vast-server.ts): exactly what vast-cli repeats — 429, 502, 503 and 504, for every
 * method (vastai/api/client.py `_RETRYABLE_STATUS`) — and nothing else, so an action Vast answered
 * with a 500, which may have been carried out, is sent once.
 */
import { describe, expect, it } from "vitest";
import type { VastProvider } from "../../fleet/providers/vast.ts";
import { vastInstance } from "./vast-server.ts";
import { providerError, useVastClient } from "./vast-client-fixture.ts";

const client = useVastClient("vast-test-key-789");

const ACTIONS: [string, (vast: VastProvider) => Promise<unknown>][] = [
  ["reboot", (vast) => vast.reboot("7")],
  ["start", (vast) => vast.start("7")],
  ["stop", (vast) => vast.stop("7")],
  ["label", (vast) => vast.setLabel("7", "trainer")],
  ["destroy", (vast) => vast.destroy("7")],
];

describe("Vast.ai retries, as vast-cli's", () => {
  it("a reboot acknowledged with a 500 is sent once, and so is every other action", async () => {
    for (const [kind, act] of ACTIONS) {
      const { vast, requests, slept } = await client({
        instances: [vastInstance(7)],
        intercept: () => ({ status: 500, body: { error: "server_error", msg: "rebooting" } }),
      });
      const err = await providerError(act(vast));
      expect(err, kind).toMatchObject({ status: 500, retryable: false });
      expect(err.message).toContain("not retried");
      expect(requests, kind).toHaveLength(1);
      expect(slept, kind).toEqual([]);
    }
  });

  it("an action answered 429, 502, 503 or 504 is sent again, and done once it is accepted", async () => {
    for (const status of [429, 502, 503, 504]) {
      const { vast, requests, fake } = await client({
        instances: [vastInstance(7, { actual_status: "exited" })],
        intercept: (_req, i) => (i === 0 ? { status, body: { error: "busy" } } : undefined),
      });
      await vast.start("7");
      expect(
        requests.map((r) => [r.method, r.path]),
        String(status),
      ).toEqual([
        ["PUT", "/api/v0/instances/7/"],
        ["PUT", "/api/v0/instances/7/"],
      ]);
      expect(fake.instances.get(7)!.actual_status).toBe("running");
    }
  });

  it("reads retry what vast-cli retries for reads, the same four, and not a 500", async () => {
    const flaky = await client({
      instances: [vastInstance(7)],
      intercept: (_req, i) => (i === 0 ? { status: 504, raw: "gateway timeout" } : undefined),
    });
    expect((await flaky.vast.list()).map((i) => i.id)).toEqual(["7"]);
    expect(flaky.requests).toHaveLength(2);

    const broken = await client({ instances: [vastInstance(7)], intercept: () => ({ status: 500, body: { error: "server_error" } }) });
    expect((await providerError(broken.vast.list())).status).toBe(500);
    expect((await providerError(broken.vast.get("7"))).status).toBe(500);
    expect(broken.requests).toHaveLength(2);
  });
});
