/**
 * The Vast.ai client's listing, retries and errors against the strict vast-cli-shaped fake
 * (test/fleet/vast-server.ts): every page is asked for the way vast-cli asks, and the list is all
 * pages or an error.
 */
import { describe, expect, it } from "vitest";
import { isGoneInstance, vastState } from "../../fleet/providers/vast-instance.ts";
import { startVastServer, vastInstance } from "./vast-server.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { providerError, useVastClient } from "./vast-client-fixture.ts";

export const KEY = "vast-test-key-123";
const client = useVastClient(KEY);

const fleetOf = (count: number) => Array.from({ length: count }, (_, i) => vastInstance(1000 + i));

describe("Vast.ai client: listing as vast-cli lists", () => {
  it("lists a 60-instance fleet whole across three pages, sending each answer's next_token back as after_token", async () => {
    const { vast, requests } = await client({ instances: fleetOf(60).reverse() });
    const fleet = await vast.list();
    expect(fleet.map((i) => i.id)).toEqual(fleetOf(60).map((r) => String(r.id)));
    expect(requests).toHaveLength(3);
    for (const [page, req] of requests.entries()) {
      expect(req).toMatchObject({ method: "GET", path: "/api/v1/instances/", authorization: `Bearer ${KEY}` });
      expect(req.userAgent).toMatch(/fleetwarden/);
      expect([...req.query.keys()]).toEqual(
        page === 0 ? ["select_filters", "order_by", "limit"] : ["select_filters", "order_by", "limit", "after_token"],
      );
      expect(JSON.parse(req.query.get("select_filters")!)).toEqual({});
      expect(JSON.parse(req.query.get("order_by")!)).toEqual([{ col: "id", dir: "asc" }]);
      expect(req.query.get("limit")).toBe("25");
    }
    // Byte for byte what vast-cli's _build_url sends (json.dumps of each non-string value, then
    // quote_plus), as printed by running that code with show_instances' params.
    expect(requests[0]!.rawQuery).toBe(
      "select_filters=%7B%7D&order_by=%5B%7B%22col%22%3A+%22id%22%2C+%22dir%22%3A+%22asc%22%7D%5D&limit=25",
    );
    expect(requests[1]!.query.get("after_token")).toMatch(/^tok_/);
    expect(requests[2]!.query.get("after_token")).not.toBe(requests[1]!.query.get("after_token"));
  });

  it("maps each instance onto the fleet model", async () => {
    const { vast } = await client({
      instances: [vastInstance(101), vastInstance(103, { actual_status: "exited", status_msg: " CUDA out of memory " })],
    });
    const fleet = await vast.list();
    expect(fleet[0]).toEqual({
      id: "101",
      state: "running",
      label: "job-101",
      gpuName: "RTX 4090",
      gpuCount: 2,
      pricePerHour: 0.734,
      statusMessage: "success, running pytorch/pytorch",
      startedAt: 1767225600500,
      gpuUtil: 87.5,
      diskUsedPct: 42,
      storagePerHour: 0.0139,
      endsAt: 1769904000000,
      interruptible: false,
      stopReason: null,
      machineId: "12",
      diskGb: 100,
      reliability: null,
      spec: null,
    });
    expect(fleet[1]).toMatchObject({ state: "exited", statusMessage: "CUDA out of memory" });
  });

  it("an empty fleet is one request answered with no instances", async () => {
    const { vast, requests } = await client({});
    expect(await vast.list()).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it("a 410 from the list endpoint is an error, never an empty fleet", async () => {
    const { vast, requests } = await client({
      intercept: () => ({ status: 410, body: { success: false, error: "gone", msg: "use /api/v1/instances/" } }),
    });
    const err = await providerError(vast.list());
    expect(err.status).toBe(410);
    expect(err.message).toContain("use /api/v1/instances/");
    expect(requests).toHaveLength(1);
  });

  it("a malformed answer is an error: missing instances array, or an instance without a usable id", async () => {
    const shapes = [
      { success: true },
      { instances: "none" },
      { instances: [{ ...vastInstance(1), id: "abc" }] },
      { instances: [{ actual_status: "running" }] },
    ];
    for (const body of shapes) {
      const { vast } = await client({ intercept: () => ({ body }) });
      expect((await providerError(vast.list())).message).toMatch(/malformed instance list/);
    }
    const { vast } = await client({ intercept: () => ({ raw: "<html>maintenance</html>" }) });
    expect((await providerError(vast.list())).message).toMatch(/not JSON/);
  });

  it("an error on a later page fails the whole list instead of returning the pages before it", async () => {
    const { vast, requests } = await client({
      instances: fleetOf(30),
      intercept: (req) =>
        req.query.has("after_token") ? { status: 401, body: { success: false, error: "auth_error", msg: "expired" } } : undefined,
    });
    expect((await providerError(vast.list())).status).toBe(401);
    expect(requests).toHaveLength(2);
  });

  it("a last page that leaves the list short of its own total_instances is an error, never a smaller fleet", async () => {
    for (const body of [
      { instances: [], total_instances: 60 },
      { instances: [vastInstance(1)], next_token: null, total_instances: 2 },
    ]) {
      const { vast } = await client({ intercept: () => ({ body }) });
      expect(await providerError(vast.list())).toMatchObject({
        message: expect.stringMatching(/contradicts itself.*total_instances says/),
        retryable: true,
      });
    }
    // Over pages: the fake's first page (25 of 30), then a last page of 3 rows and no token.
    const { vast, requests } = await client({
      instances: fleetOf(30),
      intercept: (req) =>
        req.query.has("after_token") ? { body: { instances: fleetOf(3), next_token: null, total_instances: 30 } } : undefined,
    });
    expect((await providerError(vast.list())).message).toMatch(/ends after 28 instance\(s\), but total_instances says 30/);
    expect(requests).toHaveLength(2);
  });

  it("more rows than total_instances (an instance created while paging) is still the whole list", async () => {
    const { vast } = await client({
      intercept: () => ({ body: { instances: [vastInstance(1), vastInstance(2)], next_token: null, total_instances: 1 } }),
    });
    expect((await vast.list()).map((i) => i.id)).toEqual(["1", "2"]);
  });

  it("leaves out instances Vast lists as destroyed or unloaded: they are gone, not unknown or offline", async () => {
    const { vast } = await client({
      instances: [
        vastInstance(101),
        vastInstance(102, { actual_status: "destroyed", intended_status: "destroyed" }),
        vastInstance(103, { actual_status: null, cur_state: "unloaded" }),
        vastInstance(104, { intended_status: "destroyed" }),
      ],
    });
    expect((await vast.list()).map((i) => [i.id, i.state])).toEqual([["101", "running"]]);
    expect(await vast.get("102")).toBeNull();
    expect(await vast.get("103")).toBeNull();
    expect(await vast.get("101")).toMatchObject({ state: "running" });
  });

  it("a page token that repeats is an error rather than an endless loop", async () => {
    const { vast, requests } = await client({ intercept: () => ({ body: { instances: [vastInstance(1)], next_token: "same" } }) });
    expect((await providerError(vast.list())).message).toMatch(/repeated a page token/);
    expect(requests.length).toBe(2);
  });
});

describe("Vast.ai client: retries and errors", () => {
  it("retries 429 with backoff, honouring Retry-After, then succeeds", async () => {
    const { vast, slept, requests } = await client({
      instances: [vastInstance(5)],
      intercept: (_req, i) => (i === 0 ? { status: 429, body: { detail: "slow down" }, headers: { "Retry-After": "3" } } : undefined),
    });
    expect((await vast.list()).map((i) => i.id)).toEqual(["5"]);
    expect(requests).toHaveLength(2);
    expect(slept).toEqual([3000]);
  });

  it("retries 5xx with growing backoff and gives up after maxAttempts with a retryable error", async () => {
    const { vast, slept, requests } = await client(
      { intercept: () => ({ status: 503, body: { error: "maintenance" } }) },
      { maxAttempts: 3, backoffMs: 100 },
    );
    expect(await providerError(vast.list())).toMatchObject({ status: 503, retryable: true });
    expect(requests).toHaveLength(3);
    expect(slept).toEqual([100, 200]);
  });

  it("a rejected key (the fake's own 401) is not retried and says the key was rejected", async () => {
    const { vast, requests } = await client({ apiKey: "another-key" });
    const err = await providerError(vast.get("42"));
    expect(err).toMatchObject({ status: 401, retryable: false });
    expect(err.message).toContain("rejected the API key");
    expect(requests).toHaveLength(1);
  });

  it("an unreachable server is a retryable error after the retries, not an empty fleet", async () => {
    const probe = await startVastServer();
    const url = probe.url;
    await probe.close();
    const slept: number[] = [];
    const vast = new VastProvider({ apiKey: KEY, baseUrl: url, sleep: async (ms) => void slept.push(ms), maxAttempts: 2 });
    expect((await providerError(vast.list())).retryable).toBe(true);
    expect(slept).toHaveLength(1);
  });
});

describe("Vast.ai state mapping", () => {
  it("keeps the container's status and falls back to intent and contract while it has none", () => {
    for (const s of ["created", "loading", "running", "stopped", "frozen", "exited", "rebooting", "unknown", "offline"]) {
      expect(vastState(s, "running", "running")).toBe(s);
    }
    expect(vastState("scheduling", "running", "running")).toBe("unknown");
    expect(vastState(null, "running", "running")).toBe("created");
    expect(vastState(null, "stopped", "stopped")).toBe("stopped");
  });

  it("an instance destroyed, terminated or unloaded is gone", () => {
    expect(isGoneInstance({ actual_status: "destroyed", intended_status: "destroyed", cur_state: "stopped" })).toBe(true);
    expect(isGoneInstance({ actual_status: "terminated", intended_status: "running", cur_state: "running" })).toBe(true);
    expect(isGoneInstance({ actual_status: null, intended_status: "running", cur_state: "unloaded" })).toBe(true);
    expect(isGoneInstance({ actual_status: "offline", intended_status: "running", cur_state: "running" })).toBe(false);
    expect(isGoneInstance({ actual_status: "exited", intended_status: "running", cur_state: "stopped" })).toBe(false);
  });
});
