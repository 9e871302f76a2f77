/**
 * The Vast.ai client's show, actions and logs against the strict vast-cli-shaped fake
 * (test/fleet/vast-server.ts): each call is the one vast-cli makes, and the fake's fleet changes
 * the way the real one would.
 */
import { describe, expect, it } from "vitest";
import { vastInstance } from "./vast-server.ts";
import { providerError, useVastClient } from "./vast-client-fixture.ts";

const KEY = "vast-test-key-456";
const client = useVastClient(KEY);

const call = (r: { method: string; path: string; rawQuery: string; body: unknown }) => [
  r.method,
  r.rawQuery ? `${r.path}?${r.rawQuery}` : r.path,
  r.body,
];

describe("Vast.ai client: one instance", () => {
  it("shows an instance with GET /api/v0/instances/{id}/?owner=me, and null for one Vast does not know", async () => {
    const { vast, requests } = await client({ instances: [vastInstance(42, { actual_status: null, intended_status: "stopped" })] });
    expect(await vast.get("42")).toMatchObject({ id: "42", state: "stopped", gpuCount: 2 });
    expect(await vast.get("43")).toBeNull();
    expect(requests.map(call)).toEqual([
      ["GET", "/api/v0/instances/42/?owner=me", undefined],
      ["GET", "/api/v0/instances/43/?owner=me", undefined],
    ]);
  });

  it("a 404 for a show is null too", async () => {
    const { vast } = await client({ intercept: () => ({ status: 404, body: { success: false, error: "no_such_instance" } }) });
    expect(await vast.get("44")).toBeNull();
  });
});

describe("Vast.ai client: actions as vast-cli sends them", () => {
  it("restarts an exited instance with exactly vast-cli's start call, and the fleet shows it running", async () => {
    const { vast, requests, fake } = await client({
      instances: [vastInstance(9, { actual_status: "exited", intended_status: "running", status_msg: "exited with code 1" })],
    });
    expect((await vast.get("9"))!.state).toBe("exited");
    await vast.start("9");
    const start = requests[1]!;
    expect(call(start)).toEqual(["PUT", "/api/v0/instances/9/", { state: "running" }]);
    expect(start).toMatchObject({ authorization: `Bearer ${KEY}`, contentType: "application/json" });
    expect(start.userAgent).toMatch(/fleetwarden/);
    expect(fake.instances.get(9)).toMatchObject({ actual_status: "running", intended_status: "running" });
    expect((await vast.get("9"))!.state).toBe("running");
  });

  it("sends stop, label, reboot and destroy with vast-cli's bodies ({} on reboot and DELETE)", async () => {
    const { vast, requests, fake } = await client({ instances: [vastInstance(9)] });
    await vast.stop("9");
    await vast.setLabel("9", "trainer-a");
    await vast.reboot("9");
    await vast.destroy("9");
    expect(requests.map(call)).toEqual([
      ["PUT", "/api/v0/instances/9/", { state: "stopped" }],
      ["PUT", "/api/v0/instances/9/", { label: "trainer-a" }],
      ["PUT", "/api/v0/instances/reboot/9/", {}],
      ["DELETE", "/api/v0/instances/9/", {}],
    ]);
    expect(fake.instances.has(9)).toBe(false);
  });

  it("an action on an unknown instance is a 404 ProviderError; success:false is an error too", async () => {
    const { vast } = await client({
      instances: [vastInstance(5)],
      intercept: (req) => (req.path === "/api/v0/instances/5/" ? { body: { success: false, msg: "machine busy" } } : undefined),
    });
    expect((await providerError(vast.start("404"))).status).toBe(404);
    expect((await providerError(vast.stop("5"))).message).toContain("machine busy");
  });

  it("a destroy whose first answer was lost (502) and whose retry finds the instance gone has succeeded", async () => {
    const { vast, requests } = await client({ intercept: (_req, i) => (i === 0 ? { status: 502, raw: "bad gateway" } : undefined) });
    await expect(vast.destroy("77")).resolves.toBeUndefined();
    expect(requests.map((r) => r.method)).toEqual(["DELETE", "DELETE"]);
    // a 404 on the first attempt is still an error
    expect((await providerError(vast.destroy("78"))).status).toBe(404);
    expect(requests).toHaveLength(3);
  });

  it("a non-numeric id never reaches the network", async () => {
    const { vast, requests } = await client({});
    expect(await vast.get("../accounts")).toBeNull();
    expect((await providerError(vast.destroy("sim-1"))).status).toBe(404);
    expect((await providerError(vast.logs("sim-1", { tailLines: 5, maxChars: 100 }))).status).toBe(404);
    expect(requests).toHaveLength(0);
  });
});

describe("Vast.ai client: logs", () => {
  const log = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`)
    .concat("RuntimeError: CUDA error: an illegal memory access was encountered")
    .join("\n");

  it("requests the log, polls its result_url without the API key until it is there, and keeps the tail", async () => {
    const { vast, requests, slept } = await client({ instances: [vastInstance(12)], logOf: () => log, logPollsBeforeReady: 2 });
    const got = await vast.logs("12", { tailLines: 3, maxChars: 4000 });
    expect(got).toEqual({ text: "line 49\nline 50\nRuntimeError: CUDA error: an illegal memory access was encountered", truncated: false });
    expect(call(requests[0]!)).toEqual(["PUT", "/api/v0/instances/request_logs/12/", { tail: "3" }]);
    const polls = requests.slice(1);
    expect(polls).toHaveLength(3);
    expect(polls.every((r) => r.method === "GET" && r.path.startsWith("/storage/") && r.authorization === undefined)).toBe(true);
    expect(slept).toEqual([300, 300, 300]);
  });

  it("cuts a long log to maxChars from the end", async () => {
    const { vast } = await client({ instances: [vastInstance(12)], logOf: () => log });
    const got = await vast.logs("12", { tailLines: 1000, maxChars: 90 });
    expect(got.truncated).toBe(true);
    expect(got.text.length).toBeLessThanOrEqual(90);
    expect(got.text.endsWith("illegal memory access was encountered")).toBe(true);
  });

  it("gives up after logPolls polls with a retryable error, and an unknown instance is a 404", async () => {
    const { vast, requests } = await client({ instances: [vastInstance(12)], logPollsBeforeReady: 1_000 }, { logPolls: 4 });
    expect(await providerError(vast.logs("12", { tailLines: 10, maxChars: 100 }))).toMatchObject({ status: 504, retryable: true });
    expect(requests).toHaveLength(5);
    expect((await providerError(vast.logs("13", { tailLines: 10, maxChars: 100 }))).status).toBe(404);
  });
});
