/**
 * The RunPod client against its strict stand-in (runpod-server.ts) over real HTTP: pod states
 * mapped onto ours, GraphQL `errors` answered with 200 read as failures, values sent as
 * variables, a deploy sent once whatever happens, reads retried a bounded number of times, and the
 * stand-in itself refusing what RunPod refuses.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RunpodProvider } from "../../fleet/providers/runpod.ts";
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

describe("RunPod client", () => {
  it("maps desiredStatus and runtime onto our states, with utilisation, start time and spec", async () => {
    const { runpod } = await client({
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
        runpodPodRow("podboot", { desiredStatus: "RESTARTING" }),
        runpodPodRow("poddead", { desiredStatus: "DEAD", runtime: null }),
        runpodPodRow("podnew1", { desiredStatus: "CREATED", runtime: null }),
      ],
    });
    const byId = Object.fromEntries((await runpod.list()).map((i) => [i.id, i]));
    expect(Object.fromEntries(Object.entries(byId).map(([id, i]) => [id, i.state]))).toEqual({
      podrun1: "running",
      podload: "loading",
      podstop: "stopped",
      podboot: "rebooting",
      poddead: "exited",
      podnew1: "created",
    });
    expect(byId.podrun1).toMatchObject({
      gpuUtil: 80,
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
  });

  it("reads GraphQL errors answered with 200 as a ProviderError naming RunPod's words", async () => {
    const { runpod, fake } = await client({ pods: [] });
    const err = await providerError(runpod.destroy("podnope1"));
    expect(err.message).toContain("pod not found to terminate");
    expect(err.status).toBe(404);
    expect(fake.requests).toHaveLength(1); // a refusal is not retried
  });

  it("sends values as variables (an id cannot rewrite the query) and resumes with the pod's GPU count", async () => {
    const { runpod, fake } = await client({ pods: [runpodPodRow("podaaa1", { desiredStatus: "EXITED", runtime: null, gpuCount: 4 })] });
    await runpod.start("podaaa1");
    const resume = fake.requests.at(-1)!.body!;
    expect(resume.query).not.toContain("podaaa1");
    expect(resume.variables).toEqual({ input: { podId: "podaaa1", gpuCount: 4 } });
    expect(await runpod.get('x"}) { id } }')).toBeNull();
  });

  it("sends a deploy once, even when its answer is a 502 or lost", async () => {
    const { runpod, fake } = await client({
      intercept: (req) => (req.body?.query?.includes("podFindAndDeployOnDemand") ? { status: 502, body: {} } : undefined),
    });
    const err = await providerError(
      runpod.create(
        {
          id: "NVIDIA GeForce RTX 4090",
          machineId: null,
          gpuName: "RTX 4090",
          gpuCount: 1,
          pricePerHour: 0.69,
          diskGb: null,
          reliability: null,
        },
        { image: "img", env: {}, label: "r", diskGb: null },
      ),
    );
    expect(err.retryable).toBe(false);
    expect(fake.requests).toHaveLength(1);
  });

  it("retries a read a bounded number of times, then fails", async () => {
    const { runpod, fake, slept } = await client({ intercept: () => ({ status: 503, body: {} }) });
    const err = await providerError(runpod.list());
    expect(err.status).toBe(503);
    expect(fake.requests).toHaveLength(3);
    expect(slept).toEqual([1000, 2000]);
  });
});

describe("RunPod stand-in is strict", () => {
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
