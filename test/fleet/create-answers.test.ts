/**
 * A create's answer that is a 2xx but does not parse (issue #33 item 3): the provider may have
 * rented, so the error is a 502 that is NOT retryable (the replacement reads it as maybe rented and
 * resolves it by the marker, fleet/replacement/replacement-create.ts), sent once; a 429 stays
 * retryable (nothing was rented). Lambda Cloud and RunPod, against their strict stand-ins.
 */
import { afterEach, describe, expect, it } from "vitest";
import { LambdaProvider } from "../../fleet/providers/lambda.ts";
import { RunpodProvider } from "../../fleet/providers/runpod.ts";
import { ProviderError, type InstanceSpec } from "../../fleet/providers/provider.ts";
import { A100_TYPE, startLambdaServer, type LambdaServer } from "./lambda-server.ts";
import { startRunpodServer, type RunpodServer } from "./runpod-server.ts";

const servers: (LambdaServer | RunpodServer)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const spec: InstanceSpec = { image: "img:1", env: {}, label: "fw-replace-x", diskGb: 20 };
const offerOf = (id: string) => ({
  id,
  machineId: null,
  gpuName: "A100",
  gpuCount: 1,
  pricePerHour: 1.29,
  diskGb: null,
  reliability: null,
});
const caught = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => err as ProviderError,
  );

describe("malformed create answers", () => {
  it("Lambda Cloud: a launch answered 200 without instance ids is a non-retryable 502, sent once", async () => {
    const server = await startLambdaServer({
      apiKey: "k",
      instanceTypes: { [A100_TYPE.name]: { instance_type: A100_TYPE, regions_with_capacity_available: [{ name: "us-east-1" }] } },
      intercept: (req) => (req.path === "/instance-operations/launch" ? { status: 200, body: { data: {} } } : undefined),
    });
    servers.push(server);
    const lambda = new LambdaProvider({ apiKey: "k", baseUrl: server.url, sleep: async () => {} });
    const err = await caught(lambda.create(offerOf(`${A100_TYPE.name}@us-east-1`), spec));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ status: 502, retryable: false });
    expect(server.requests.filter((r) => r.path === "/instance-operations/launch")).toHaveLength(1);
  });

  it("RunPod: a create (REST POST /pods) answered 2xx without a pod id is a non-retryable 502; a 429 stays retryable", async () => {
    const isCreate = (req: { method: string; path: string }) => req.method === "POST" && req.path === "/v1/pods";
    let answer: { status: number; body: unknown } = { status: 200, body: {} };
    const server = await startRunpodServer({
      apiKey: "k",
      intercept: (req) => (isCreate(req) ? answer : undefined),
    });
    servers.push(server);
    const runpod = new RunpodProvider({ apiKey: "k", url: server.url, sleep: async () => {} });
    expect(await caught(runpod.create(offerOf("NVIDIA A100"), spec))).toMatchObject({ status: 502, retryable: false });
    answer = { status: 201, body: { machineId: "m" } };
    expect(await caught(runpod.create(offerOf("NVIDIA A100"), spec))).toMatchObject({ status: 502, retryable: false });
    answer = { status: 429, body: { error: "Too many requests", status: 429 } };
    expect(await caught(runpod.create(offerOf("NVIDIA A100"), spec))).toMatchObject({ status: 429, retryable: true });
    expect(server.requests.filter(isCreate)).toHaveLength(3);
  });
});
