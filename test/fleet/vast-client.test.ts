import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../fleet/provider.ts";
import { VastProvider, type VastOptions } from "../../fleet/vast.ts";
import { vastState } from "../../fleet/vast-instance.ts";
import { startVastServer, vastInstance, type Answer, type SeenRequest, type VastServer } from "./vast-server.ts";

const KEY = "vast-test-key-123";
let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function client(handler: (req: SeenRequest, index: number) => Answer, options: Partial<VastOptions> = {}) {
  server = await startVastServer(handler);
  const slept: number[] = [];
  const vast = new VastProvider({
    apiKey: KEY,
    baseUrl: `${server.url}/`,
    sleep: async (ms) => void slept.push(ms),
    ...options,
  });
  return { vast, slept, requests: server.requests };
}

async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe("Vast.ai client: listing", () => {
  it("follows next_token through every page of GET /api/v1/instances/ with the bearer key, and maps each instance", async () => {
    const { vast, requests } = await client((req) => {
      if (req.path !== "/api/v1/instances/") return { status: 410, body: { error: "gone" } };
      const token = req.query.get("next_token");
      if (!token) return { body: { success: true, instances: [vastInstance(101), vastInstance(102)], next_token: "page-2" } };
      if (token === "page-2") return { body: { success: true, instances: [vastInstance(103, { actual_status: "exited", status_msg: " CUDA out of memory " })], next_token: "page-3" } };
      return { body: { success: true, instances: [], next_token: null } };
    });
    const fleet = await vast.list();
    expect(fleet.map((i) => i.id)).toEqual(["101", "102", "103"]);
    expect(fleet[0]).toEqual({
      id: "101",
      state: "running",
      label: "job-101",
      gpuName: "RTX 4090",
      gpuCount: 2,
      pricePerHour: 0.734,
      statusMessage: "success, running pytorch/pytorch",
      startedAt: 1767225600500,
    });
    expect(fleet[2]).toMatchObject({ state: "exited", statusMessage: "CUDA out of memory" });
    expect(requests.map((r) => r.query.get("next_token"))).toEqual([null, "page-2", "page-3"]);
    expect(requests.every((r) => r.method === "GET" && r.path === "/api/v1/instances/" && r.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it("a 410 from the list endpoint is an error, never an empty fleet", async () => {
    const { vast, requests } = await client(() => ({ status: 410, body: { success: false, error: "gone", msg: "use /api/v1/instances/" } }));
    const err = await providerError(vast.list());
    expect(err.status).toBe(410);
    expect(err.message).toContain("use /api/v1/instances/");
    expect(requests).toHaveLength(1);
  });

  it("a malformed answer is an error: missing instances array, or an instance without a usable id", async () => {
    const shapes = [{ success: true }, { instances: "none" }, { instances: [{ ...vastInstance(1), id: "abc" }] }, { instances: [{ actual_status: "running" }] }];
    for (const body of shapes) {
      const { vast } = await client(() => ({ body }));
      const err = await providerError(vast.list());
      expect(err.message).toMatch(/malformed instance list/);
      await server!.close();
      server = null;
    }
    const { vast } = await client(() => ({ raw: "<html>maintenance</html>" }));
    expect((await providerError(vast.list())).message).toMatch(/not JSON/);
  });

  it("an error on a later page fails the whole list instead of returning the pages before it", async () => {
    const { vast } = await client((req) =>
      req.query.get("next_token") ? { status: 401, body: { success: false, error: "auth_error", msg: "expired" } } : { body: { instances: [vastInstance(7)], next_token: "t2" } },
    );
    const err = await providerError(vast.list());
    expect(err.status).toBe(401);
  });

  it("a page token that repeats is an error rather than an endless loop", async () => {
    const { vast, requests } = await client(() => ({ body: { instances: [vastInstance(1)], next_token: "same" } }));
    await providerError(vast.list());
    expect(requests.length).toBe(2);
  });
});

describe("Vast.ai client: retries and errors", () => {
  it("retries 429 with backoff, honouring Retry-After, then succeeds", async () => {
    const { vast, slept, requests } = await client((_req, i) =>
      i === 0 ? { status: 429, body: { detail: "slow down" }, headers: { "Retry-After": "3" } } : { body: { instances: [vastInstance(5)] } },
    );
    expect((await vast.list()).map((i) => i.id)).toEqual(["5"]);
    expect(requests).toHaveLength(2);
    expect(slept).toEqual([3000]);
  });

  it("retries 5xx with growing backoff and gives up after maxAttempts with a retryable error", async () => {
    const { vast, slept, requests } = await client(() => ({ status: 503, body: { error: "maintenance" } }), { maxAttempts: 3, backoffMs: 100 });
    const err = await providerError(vast.list());
    expect(err).toMatchObject({ status: 503, retryable: true });
    expect(requests).toHaveLength(3);
    expect(slept).toEqual([100, 200]);
  });

  it("401 and 403 are not retried and say the key was rejected", async () => {
    for (const status of [401, 403]) {
      const { vast, requests } = await client(() => ({ status, body: { success: false, error: "auth_error", msg: "Invalid API key" } }));
      const err = await providerError(vast.get("42"));
      expect(err).toMatchObject({ status, retryable: false });
      expect(err.message).toContain("rejected the API key");
      expect(requests).toHaveLength(1);
      await server!.close();
      server = null;
    }
  });

  it("an unreachable server is a retryable error after the retries, not an empty fleet", async () => {
    const probe = await startVastServer(() => ({}));
    const url = probe.url;
    await probe.close();
    const slept: number[] = [];
    const vast = new VastProvider({ apiKey: KEY, baseUrl: url, sleep: async (ms) => void slept.push(ms), maxAttempts: 2 });
    const err = await providerError(vast.list());
    expect(err.retryable).toBe(true);
    expect(slept).toHaveLength(1);
  });
});

describe("Vast.ai client: one instance and actions", () => {
  it("shows an instance from GET /api/v0/instances/{id}/ and answers null for a 404", async () => {
    const { vast, requests } = await client((req) =>
      req.path === "/api/v0/instances/42/" ? { body: { instances: vastInstance(42, { actual_status: null, intended_status: "stopped" }) } } : { status: 404, body: { success: false, error: "no_such_instance" } },
    );
    expect(await vast.get("42")).toMatchObject({ id: "42", state: "stopped", gpuCount: 2 });
    expect(await vast.get("43")).toBeNull();
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/v0/instances/42/", "GET /api/v0/instances/43/"]);
  });

  it("sends start, stop, label, reboot and destroy to the documented endpoints with the documented bodies", async () => {
    const { vast, requests } = await client(() => ({ body: { success: true } }));
    await vast.start("9");
    await vast.stop("9");
    await vast.setLabel("9", "trainer-a");
    await vast.reboot("9");
    await vast.destroy("9");
    expect(requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ["PUT", "/api/v0/instances/9/", { state: "running" }],
      ["PUT", "/api/v0/instances/9/", { state: "stopped" }],
      ["PUT", "/api/v0/instances/9/", { label: "trainer-a" }],
      ["PUT", "/api/v0/instances/reboot/9/", {}],
      ["DELETE", "/api/v0/instances/9/", undefined],
    ]);
    expect(requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it("an action on an unknown instance is a 404 ProviderError; success:false is an error too", async () => {
    const { vast } = await client((req) =>
      req.path.includes("/404/") ? { status: 404, body: { success: false, error: "no_such_instance", msg: "Instance not found" } } : { body: { success: false, msg: "machine busy" } },
    );
    expect((await providerError(vast.start("404"))).status).toBe(404);
    expect((await providerError(vast.stop("5"))).message).toContain("machine busy");
  });

  it("a destroy whose first answer was lost (502) and whose retry finds the instance gone has succeeded", async () => {
    const { vast, requests } = await client((_req, i) => (i === 0 ? { status: 502, raw: "bad gateway" } : { status: 404, body: { success: false, error: "no_such_instance" } }));
    await expect(vast.destroy("77")).resolves.toBeUndefined();
    expect(requests.map((r) => r.method)).toEqual(["DELETE", "DELETE"]);
    // a 404 on the first attempt is still an error, and so is one for any other action
    expect((await providerError(vast.destroy("404"))).status).toBe(404);
    expect(requests).toHaveLength(3);
  });

  it("a non-numeric id never reaches the network", async () => {
    const { vast, requests } = await client(() => ({ body: { success: true } }));
    expect(await vast.get("../accounts")).toBeNull();
    expect((await providerError(vast.destroy("sim-1"))).status).toBe(404);
    expect(requests).toHaveLength(0);
  });
});

describe("Vast.ai state mapping", () => {
  it("keeps the container's status and falls back to intent and contract while it has none", () => {
    for (const s of ["created", "loading", "running", "stopped", "frozen", "exited", "rebooting", "unknown", "offline"]) {
      expect(vastState(s, "running", "running")).toBe(s);
    }
    expect(vastState("exited", "running", "running")).toBe("exited");
    expect(vastState("scheduling", "running", "running")).toBe("unknown");
    expect(vastState(null, "running", "running")).toBe("created");
    expect(vastState(null, "stopped", "stopped")).toBe("stopped");
    expect(vastState(null, "running", "unloaded")).toBe("offline");
  });
});
