/**
 * The RunPod client against its strict stand-in (runpod-server.ts: REST under /v1 from RunPod's
 * REST reference, GraphQL at /graphql) over real HTTP: pods listed, read, started, stopped,
 * terminated and created over REST, their runtime (image pulled, GPU use) from GraphQL, REST's
 * 404/400 read as RunPod's words, RunPod's no-capacity refusal read as nothing rented, a create
 * sent once whatever happens, reads retried a bounded number of times, and the stand-in itself
 * refusing what RunPod refuses.
 */
import { afterEach, describe, expect, it } from "vitest";
import { restBaseFor, RunpodProvider } from "../../fleet/providers/runpod.ts";
import { fromRest } from "../../fleet/providers/runpod-pod.ts";
import { classify } from "../../fleet/providers/create-answer.ts";
import type { Offer } from "../../fleet/providers/provider.ts";
import { providerError } from "./vast-client-fixture.ts";
import { runpodPodRow, startRunpodServer, type RunpodFakeOptions, type RunpodServer } from "./runpod-server.ts";

let server: RunpodServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function client(fake: RunpodFakeOptions, now = 1_800_000_000_000) {
  server = await startRunpodServer({ apiKey: "rp-key", ...fake });
  const slept: number[] = [];
  const runpod = new RunpodProvider({
    apiKey: "rp-key",
    url: server.url,
    now: () => now,
    sleep: async (ms) => void slept.push(ms),
    maxAttempts: 3,
  });
  return { runpod, slept, fake: server };
}

const post = (url: string, body: unknown, key = "rp-key") =>
  fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

const OFFER: Offer = {
  id: "NVIDIA GeForce RTX 4090",
  machineId: null,
  gpuName: "RTX 4090",
  gpuCount: 1,
  pricePerHour: 0.69,
  diskGb: null,
  reliability: null,
};

const rest = (fake: RunpodServer) => fake.requests.filter((r) => r.path.startsWith("/v1/"));
const graphql = (fake: RunpodServer) => fake.requests.filter((r) => r.path === "/graphql");

describe("RunPod client", () => {
  it("lists over REST, maps desiredStatus and the GraphQL runtime onto our states, with utilisation, start time and spec", async () => {
    const { runpod, fake } = await client({
      pods: [
        runpodPodRow("podrun1", {
          runtime: {
            uptimeInSeconds: 120,
            gpus: [
              { id: "a", gpuUtilPercent: 60 },
              { id: "b", gpuUtilPercent: 100 },
            ],
          },
          gpuCount: 2,
        }),
        runpodPodRow("podload", { runtime: null }),
        runpodPodRow("podstop", { desiredStatus: "EXITED", runtime: null }),
        runpodPodRow("podgone", { desiredStatus: "TERMINATED", runtime: null }),
      ],
    });
    const byId = Object.fromEntries((await runpod.list()).map((i) => [i.id, i]));
    expect(Object.fromEntries(Object.entries(byId).map(([id, i]) => [id, i.state]))).toEqual({
      podrun1: "running",
      podload: "loading",
      podstop: "stopped",
    });
    expect(byId.podrun1).toMatchObject({
      gpuUtil: 80,
      gpuCount: 2,
      startedAt: 1_800_000_000_000 - 120_000,
      gpuName: "RTX 4090",
      pricePerHour: 0.69,
      machineId: "m-podrun1",
    });
    expect(byId.podrun1!.spec).toEqual({
      image: "runpod/pytorch:2.1.0",
      env: { JOB: "train" },
      onstart: null,
      label: "job-podrun1",
      diskGb: 20,
      ports: "8888/http",
      volumeGb: 40,
      volumeMountPath: "/workspace",
    });
    expect(byId.podload!.gpuUtil).toBeNull();
    // One REST list (Bearer), one GraphQL read of the runtimes REST does not carry.
    expect(rest(fake).map((r) => `${r.method} ${r.path} ${r.authorization}`)).toEqual(["GET /v1/pods Bearer rp-key"]);
    expect(graphql(fake)).toHaveLength(1);
    expect(graphql(fake)[0]!.body!.query).toContain("runtime");
  });

  it("an empty fleet is one REST request (no runtime read); a 5xx on a terminate is not repeated", async () => {
    const { runpod, fake } = await client({
      pods: [runpodPodRow("podaaa1")],
      intercept: (req) => (req.method === "DELETE" ? { status: 500, body: { error: "internal", status: 500 } } : undefined),
    });
    const err = await providerError(runpod.destroy("podaaa1"));
    expect(err).toMatchObject({ status: 500, retryable: false });
    expect(fake.requests).toHaveLength(1);
    fake.pods.clear();
    expect(await runpod.list()).toEqual([]);
    expect(fake.requests.map((r) => r.path)).toEqual(["/v1/pods/podaaa1", "/v1/pods"]);
  });

  it("reads GraphQL errors answered with 200 (the runtime read beside a list) as a ProviderError naming RunPod's words", async () => {
    const { runpod, fake } = await client({
      pods: [runpodPodRow("podaaa1")],
      intercept: (req) =>
        req.path === "/graphql" ? { status: 200, body: { data: null, errors: [{ message: "Something went wrong" }] } } : undefined,
    });
    const err = await providerError(runpod.list());
    expect(err.message).toContain("Something went wrong");
    expect(err.status).toBe(400);
    expect(graphql(fake)).toHaveLength(1); // a refusal is not retried
  });

  it("gets one pod over REST; an unknown or terminated pod is null, a malformed id is never sent", async () => {
    const { runpod, fake } = await client({ pods: [runpodPodRow("podaaa1"), runpodPodRow("podgone", { desiredStatus: "TERMINATED" })] });
    expect(await runpod.get("podaaa1")).toMatchObject({ id: "podaaa1", state: "running", gpuUtil: 80 });
    expect(await runpod.get("podzzz9")).toBeNull();
    expect(await runpod.get("podgone")).toBeNull();
    const before = fake.requests.length;
    expect(await runpod.get("../pods")).toBeNull();
    expect(fake.requests).toHaveLength(before);
    expect(rest(fake).map((r) => r.path)).toEqual(["/v1/pods/podaaa1", "/v1/pods/podzzz9", "/v1/pods/podgone"]);
  });

  it("starts, stops and terminates over REST with RunPod's lifecycle states", async () => {
    const { runpod, fake } = await client({ pods: [runpodPodRow("podaaa1", { desiredStatus: "EXITED", runtime: null, gpuCount: 4 })] });
    await runpod.start("podaaa1");
    expect(fake.pods.get("podaaa1")!.desiredStatus).toBe("RUNNING");
    expect((await runpod.get("podaaa1"))!.state).toBe("loading"); // RUNNING, image not pulled yet
    await runpod.stop("podaaa1");
    expect(fake.pods.get("podaaa1")!.desiredStatus).toBe("EXITED");
    await runpod.destroy("podaaa1");
    expect(fake.pods.has("podaaa1")).toBe(false);
    expect(rest(fake).map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v1/pods/podaaa1/start",
      "GET /v1/pods/podaaa1",
      "POST /v1/pods/podaaa1/stop",
      "DELETE /v1/pods/podaaa1",
    ]);
  });

  it("reads REST's refusal of an unknown pod as a ProviderError naming RunPod's words, not retried", async () => {
    const { runpod, fake } = await client({ pods: [] });
    const err = await providerError(runpod.destroy("podnope1"));
    expect(err.message).toContain("Invalid Pod ID.");
    expect(err.status).toBe(400);
    expect(fake.requests).toHaveLength(1); // a refusal is not retried
  });

  it("a start whose host has no free GPUs fails with RunPod's words, once", async () => {
    const { runpod, fake } = await client({
      pods: [runpodPodRow("podaaa1", { desiredStatus: "EXITED", runtime: null })],
      failures: { hostGpusTaken: true },
    });
    const err = await providerError(runpod.start("podaaa1"));
    expect(err.message).toContain("There are not enough free GPUs on the host machine to start this pod.");
    expect(err.status).toBe(400);
    expect(fake.requests).toHaveLength(1);
    expect(fake.pods.get("podaaa1")!.desiredStatus).toBe("EXITED");
  });

  it("creates with RunPod's PodCreateInput fields; the new pod lists as loading", async () => {
    const { runpod, fake } = await client({});
    const created = await runpod.create(OFFER, {
      image: "img:1",
      env: { A: "1" },
      label: "rp-new",
      diskGb: 30,
      onstart: "python train.py",
      ports: "8888/http, 22/tcp",
      volumeGb: 50,
      volumeMountPath: "/workspace",
    });
    const sent = rest(fake).find((r) => r.method === "POST" && r.path === "/v1/pods")!;
    expect(sent.body).toEqual({
      name: "rp-new",
      imageName: "img:1",
      computeType: "GPU",
      gpuTypeIds: ["NVIDIA GeForce RTX 4090"],
      gpuCount: 1,
      supportPublicIp: true,
      containerDiskInGb: 30,
      dockerStartCmd: ["sh", "-c", "python train.py"],
      ports: ["8888/http", "22/tcp"],
      volumeInGb: 50,
      volumeMountPath: "/workspace",
      env: { A: "1" },
    });
    const listed = (await runpod.list()).find((i) => i.id === created.id)!;
    expect(listed).toMatchObject({ state: "loading", label: "rp-new" });
    expect(listed.spec).toMatchObject({ image: "img:1", env: { A: "1" }, onstart: "python train.py", ports: "8888/http,22/tcp" });
  });

  it("prices offers for the Secure Cloud, where a REST create (no cloudType: RunPod's default SECURE) puts the pod", async () => {
    const { runpod, fake } = await client({
      gpuTypes: [
        {
          id: "NVIDIA GeForce RTX 4090",
          displayName: "RTX 4090",
          memoryInGb: 24,
          lowestPrice: { minimumBidPrice: 0.3, uninterruptablePrice: 0.69 },
        },
      ],
    });
    const offers = await runpod.offers({
      gpuName: "RTX 4090",
      gpuCount: 2,
      minDiskGb: null,
      maxPricePerHour: 5,
      minReliability: null,
      excludeMachineIds: [],
      limit: 5,
    });
    expect(offers.map((o) => [o.id, o.pricePerHour])).toEqual([["NVIDIA GeForce RTX 4090", 1.38]]);
    expect(graphql(fake)[0]!.body!.variables).toEqual({ lowest: { gpuCount: 2, secureCloud: true } });
    await runpod.create(offers[0]!, { image: "img", env: {}, label: "r", diskGb: null });
    const sent = rest(fake).find((r) => r.method === "POST")!;
    expect(sent.body).not.toHaveProperty("cloudType");
    expect(sent.body).toMatchObject({ gpuTypeIds: ["NVIDIA GeForce RTX 4090"], gpuCount: 2 });
  });

  it("reads RunPod's no-capacity refusal as nothing rented, whether a 400 or a 5xx, sent once", async () => {
    for (const status of [400, 500]) {
      const { runpod, fake } = await client({ failures: { noCapacity: status } });
      const err = await providerError(runpod.create(OFFER, { image: "img", env: {}, label: "r", diskGb: null }));
      expect(err.message).toContain("There are no longer any instances available with the requested specifications");
      expect(classify(err)).toBe("taken");
      expect(fake.requests).toHaveLength(1);
      expect(fake.pods.size).toBe(0);
      await fake.close();
      server = null;
    }
  });

  it("sends a create once, even when its answer is a 502 or lost", async () => {
    const { runpod, fake } = await client({
      intercept: (req) => (req.method === "POST" && req.path === "/v1/pods" ? { status: 502, body: {} } : undefined),
    });
    const err = await providerError(runpod.create(OFFER, { image: "img", env: {}, label: "r", diskGb: null }));
    expect(err.retryable).toBe(false);
    expect(classify(err)).toBe("maybe_rented");
    expect(fake.requests).toHaveLength(1);
  });

  it("retries a read a bounded number of times, then fails", async () => {
    const { runpod, fake, slept } = await client({ intercept: () => ({ status: 503, body: {} }) });
    const err = await providerError(runpod.list());
    expect(err.status).toBe(503);
    expect(fake.requests).toHaveLength(3);
    expect(slept).toEqual([1000, 2000]);
  });

  it("sends pods to RunPod's REST host for RunPod's GraphQL host, else beside the given GraphQL URL", () => {
    expect(restBaseFor("https://api.runpod.io/graphql")).toBe("https://rest.runpod.io/v1");
    expect(restBaseFor("http://127.0.0.1:8080/graphql")).toBe("http://127.0.0.1:8080/v1");
    expect(restBaseFor("https://proxy.example.com/runpod/graphql")).toBe("https://proxy.example.com/runpod/v1");
  });

  it("takes costPerHr as RunPod's schema (a number) or its example (a string) has it; adjustedCostPerHr first", () => {
    expect(fromRest({ id: "p1", desiredStatus: "RUNNING", costPerHr: "0.74" }, null).costPerHr).toBe(0.74);
    expect(fromRest({ id: "p1", desiredStatus: "RUNNING", costPerHr: 0.74, adjustedCostPerHr: 0.69 }, null).costPerHr).toBe(0.69);
    expect(fromRest({ id: "p1", desiredStatus: "RUNNING", costPerHr: "n/a" }, null).costPerHr).toBeNull();
  });

  it("retries a 429 on a stop, then succeeds", async () => {
    let n = 0;
    const { runpod, fake } = await client({
      pods: [runpodPodRow("podaaa1")],
      intercept: () => (n++ === 0 ? { status: 429, body: { error: "Too Many Requests", status: 429 } } : undefined),
    });
    await runpod.stop("podaaa1");
    expect(fake.requests.map((r) => r.path)).toEqual(["/v1/pods/podaaa1/stop", "/v1/pods/podaaa1/stop"]);
    expect(fake.pods.get("podaaa1")!.desiredStatus).toBe("EXITED");
  });
});

const call = (url: string, method: string, body?: unknown, key = "rp-key") =>
  fetch(url, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("RunPod stand-in is strict", () => {
  it("REST: refuses a missing or wrong bearer with 401, an unknown pod with 404 (get) or 400 (actions); actions answer no content", async () => {
    const { fake } = await client({ pods: [runpodPodRow("podaaa1")] });
    const base = fake.url.replace(/\/graphql$/, "/v1");
    expect((await call(`${base}/pods`, "GET", undefined, "wrong")).status).toBe(401);
    expect((await fetch(`${base}/pods`)).status).toBe(401);
    expect((await call(`${base}/pods/podzzz9`, "GET")).status).toBe(404);
    expect((await call(`${base}/pods/podzzz9/stop`, "POST")).status).toBe(400);
    expect((await call(`${base}/pods/podzzz9`, "DELETE")).status).toBe(400);
    expect((await call(`${base}/pods/podaaa1`, "GET")).status).toBe(200);
    const stopped = await call(`${base}/pods/podaaa1/stop`, "POST");
    expect([stopped.status, await stopped.text()]).toEqual([200, ""]);
  });

  it("REST: refuses a create with an unknown field, a wrong type, a bad cloud type or no GPU type (400), creating nothing", async () => {
    const { fake } = await client({});
    const base = fake.url.replace(/\/graphql$/, "/v1");
    const ok = { imageName: "i", gpuTypeIds: ["NVIDIA A40"], gpuCount: 1 };
    for (const [body, says] of [
      [{ ...ok, gpuTypeId: "NVIDIA A40" }, 'unknown field "gpuTypeId"'],
      [{ ...ok, ports: "8888/http" }, '"ports" must be string[]'],
      [{ ...ok, env: [{ key: "A", value: "1" }] }, '"env" must be object'],
      [{ ...ok, cloudType: "ALL" }, "cloudType must be SECURE or COMMUNITY"],
      [{ imageName: "i", gpuCount: 1 }, "gpuTypeIds is required"],
    ] as const) {
      const res = await call(`${base}/pods`, "POST", body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(says);
    }
    expect(fake.pods.size).toBe(0);
    expect((await call(`${base}/pods`, "POST", ok)).status).toBe(201);
  });

  it("refuses a wrong key with 401", async () => {
    const { fake } = await client({});
    expect((await post(fake.url, { query: "query { myself { id } }" }, "wrong")).status).toBe(401);
  });

  it("refuses a field RunPod's schema lacks with graphql-js's validation error", async () => {
    const { fake } = await client({});
    const res = await post(fake.url, { query: "query myPods { myself { pods { id gpuTemperature } } }" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      errors: [{ message: 'Cannot query field "gpuTemperature" on type "Pod".', extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }],
    });
  });

  it("refuses a deploy input with an unknown field or without a required one", async () => {
    const { fake } = await client({});
    const deploy = "mutation d($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id } }";
    const unknown = await post(fake.url, {
      query: deploy,
      variables: { input: { name: "a", imageName: "i", cloudType: "ALL", gpuTypeId: "g", gpuKind: 1 } },
    });
    expect(((await unknown.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('Field "gpuKind" is not defined');
    const missing = await post(fake.url, { query: deploy, variables: { input: { name: "a", cloudType: "ALL", gpuTypeId: "g" } } });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('"imageName" of required type');
    expect(fake.pods.size).toBe(0);
  });
});
