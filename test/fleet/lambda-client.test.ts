/**
 * The Lambda Cloud client against its strict stand-in (lambda-server.ts) over real HTTP: statuses
 * mapped onto ours, the launch rate limit surfaced as one retryable 429 with no retry storm, a
 * launch never repeated after an answer that may mean it was accepted, bounded read retries
 * honouring Retry-After, and the stand-in refusing what Lambda refuses.
 */
import { afterEach, describe, expect, it } from "vitest";
import { LambdaProvider } from "../../fleet/providers/lambda.ts";
import type { Offer } from "../../fleet/providers/provider.ts";
import { providerError } from "./vast-client-fixture.ts";
import { A100_TYPE, lambdaInstanceRow, startLambdaServer, type LambdaFakeOptions, type LambdaServer } from "./lambda-server.ts";

let server: LambdaServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const TYPES = {
  [A100_TYPE.name]: { instance_type: A100_TYPE, regions_with_capacity_available: [{ name: "us-east-1" }, { name: "us-west-2" }] },
};
const OFFER: Offer = {
  id: `${A100_TYPE.name}@us-east-1`,
  machineId: null,
  gpuName: "A100 (40 GB SXM4)",
  gpuCount: 1,
  pricePerHour: 1.29,
  diskGb: 512,
  reliability: null,
};
const SPEC = { image: null, env: {}, label: "replacement", diskGb: null };
const id = (n: number) => n.toString(16).padStart(32, "0");

async function client(fake: LambdaFakeOptions) {
  server = await startLambdaServer({ apiKey: "lambda-key", instanceTypes: TYPES, ...fake });
  const slept: number[] = [];
  const lambda = new LambdaProvider({
    apiKey: "lambda-key",
    baseUrl: server.url,
    sleep: async (ms) => void slept.push(ms),
    maxAttempts: 3,
  });
  return { lambda, slept, fake: server };
}

const launches = (fake: LambdaServer) => fake.requests.filter((r) => r.path === "/instance-operations/launch").length;

describe("Lambda Cloud client", () => {
  it("maps statuses onto ours and leaves terminated instances out", async () => {
    const rows = [
      ["booting", "loading"],
      ["active", "running"],
      ["unhealthy", "unknown"],
      ["terminating", "offline"],
    ] as const;
    const { lambda } = await client({
      instances: [
        ...rows.map(([status], i) => lambdaInstanceRow(id(i + 1), { status })),
        lambdaInstanceRow(id(9), { status: "terminated" }),
      ],
    });
    const listed = await lambda.list();
    expect(listed.map((i) => i.state)).toEqual(rows.map(([, ours]) => ours));
    expect(listed[1]).toMatchObject({ gpuName: "A100 (40 GB SXM4)", gpuCount: 1, pricePerHour: 1.29, diskGb: 512 });
    expect(await lambda.get(id(9))).toBeNull();
  });

  it("offers each region with capacity, and launches with the offer's type, region and the account's SSH key", async () => {
    const { lambda, fake } = await client({ sshKeys: ["team-key"] });
    const offers = await lambda.offers({
      gpuName: "A100 (40 GB SXM4)",
      gpuCount: 1,
      minDiskGb: 100,
      maxPricePerHour: 2,
      minReliability: null,
      excludeMachineIds: [],
      limit: 5,
    });
    expect(offers.map((o) => o.id)).toEqual([`${A100_TYPE.name}@us-east-1`, `${A100_TYPE.name}@us-west-2`]);
    const created = await lambda.create(offers[1]!, SPEC);
    expect(fake.requests.find((r) => r.path === "/instance-operations/launch")!.body).toEqual({
      region_name: "us-west-2",
      instance_type_name: A100_TYPE.name,
      ssh_key_names: ["team-key"],
      file_system_names: [],
      quantity: 1,
      name: "replacement",
    });
    expect((await lambda.get(created.id))?.state).toBe("loading");
  });

  it("a launch over the rate limit is one retryable 429, sent once (no retry storm)", async () => {
    const { lambda, fake } = await client({ launchLimit: 1, launchWindowMs: 10_000, now: () => 1_000 });
    await lambda.create(OFFER, SPEC);
    const err = await providerError(lambda.create(OFFER, SPEC));
    expect(err.status).toBe(429);
    expect(err.retryable).toBe(true);
    expect(launches(fake)).toBe(2);
    expect(fake.instances.size).toBe(1);
  });

  it("never repeats a launch whose answer was a 5xx or lost: it may have been accepted", async () => {
    const { lambda, fake } = await client({
      intercept: (req) => (req.path === "/instance-operations/launch" ? { status: 503, body: {} } : undefined),
    });
    const err = await providerError(lambda.create(OFFER, SPEC));
    expect(err.retryable).toBe(false);
    expect(launches(fake)).toBe(1);
  });

  it("retries a rate-limited read at most maxAttempts times, honouring Retry-After", async () => {
    const { lambda, fake, slept } = await client({ intercept: () => ({ status: 429, body: {}, headers: { "Retry-After": "5" } }) });
    const err = await providerError(lambda.list());
    expect(err.status).toBe(429);
    expect(fake.requests).toHaveLength(3);
    expect(slept).toEqual([5000, 5000]);
  });

  it("a restart of an unknown instance is Lambda's 404, in its words", async () => {
    const { lambda } = await client({});
    const err = await providerError(lambda.reboot(id(5)));
    expect(err.status).toBe(404);
    expect(err.message).toContain("global/object-does-not-exist");
  });
});

describe("Lambda stand-in is strict", () => {
  const call = (url: string, path: string, body: unknown, key = "lambda-key") =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

  it("refuses a wrong key, a launch without a required field and an unknown field", async () => {
    const { fake } = await client({});
    expect((await call(fake.url, "/instance-operations/launch", {}, "wrong")).status).toBe(401);
    const missing = await call(fake.url, "/instance-operations/launch", { region_name: "us-east-1", ssh_key_names: ["ops"] });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: { code: "global/invalid-parameters", message: "Missing required field: instance_type_name" },
    });
    const unknown = await call(fake.url, "/instance-operations/terminate", { instance_ids: [id(1)], force: true });
    expect(unknown.status).toBe(400);
    expect(fake.instances.size).toBe(0);
  });
});
