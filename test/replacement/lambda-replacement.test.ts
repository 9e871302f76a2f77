/**
 * A Lambda Cloud instance can be replaced (issue #33 item 3). Lambda reports no image, so what it
 * can launch (instance type, region, SSH key names, file system names) is stored from its listing
 * when the instance is first seen, and the replacement re-launches from that record once the old
 * instance is gone. The replacement's marker, sent as the instance name, fits Lambda's 60
 * characters, so the new instance is still found by it after a crash.
 */
import { afterEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { LambdaProvider, MAX_NAME } from "../../fleet/providers/lambda.ts";
import { MAX_MARKER, newMarker } from "../../fleet/replacement/replacement-rows.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { A100_TYPE, lambdaInstanceRow, startLambdaServer, type LambdaServer } from "../fleet/lambda-server.ts";
import { AFTER_S, decide, rows, tick } from "./support.ts";

const servers: LambdaServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const OLD = "0920582c7ff041399e34823a0be62549";

describe("Lambda Cloud replacement", () => {
  it("re-launches a gone instance from its stored type, region, SSH key and file systems", async () => {
    const apiKey = "lambda-key-replace";
    const server = await startLambdaServer({
      apiKey,
      // The old instance's key is not the account's first: the stored one must be sent.
      sshKeys: ["someone-else", "ops-2"],
      fileSystems: [{ name: "datasets", region: "us-east-1" }],
      instances: [lambdaInstanceRow(OLD, { ssh_key_names: ["ops-2"], file_system_names: ["datasets"] })],
      instanceTypes: { [A100_TYPE.name]: { instance_type: A100_TYPE, regions_with_capacity_available: [{ name: "us-east-1" }] } },
    });
    servers.push(server);
    const provider = new LambdaProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
    const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), LAMBDA_API_KEY: apiKey } });
    await runCronTick(deps);
    const [seen] = await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default"), eq(instances.id, OLD)));
    expect(seen!.spec).toMatchObject({
      image: null,
      launch: { instanceType: "gpu_1x_a100_sxm4", region: "us-east-1", sshKeyNames: ["ops-2"], fileSystemNames: ["datasets"] },
    });

    server.instances.delete(OLD);
    deps.clock.advance(60_000);
    await runCronTick(deps);
    deps.clock.advance(AFTER_S * 1000);
    await runCronTick(deps);
    expect(await rows(deps)).toEqual([expect.objectContaining({ status: "awaiting_approval" })]);
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    const [row] = await rows(deps);
    const launch = server.requests.find((r) => r.path === "/instance-operations/launch")!;
    expect(launch.body).toEqual({
      region_name: "us-east-1",
      instance_type_name: "gpu_1x_a100_sxm4",
      ssh_key_names: ["ops-2"],
      file_system_names: ["datasets"],
      quantity: 1,
      name: row!.marker,
    });
    // The marker arrived whole, so the new instance carries it and can be found by it.
    expect(server.instances.get(row!.newInstanceId!)!.name).toBe(row!.marker);
  });

  it("leaves the file systems out of a launch in another region (Lambda refuses them there)", async () => {
    const server = await startLambdaServer({
      apiKey: "k",
      sshKeys: ["ops"],
      fileSystems: [{ name: "datasets", region: "us-east-1" }],
      instanceTypes: { [A100_TYPE.name]: { instance_type: A100_TYPE, regions_with_capacity_available: [{ name: "us-west-2" }] } },
    });
    servers.push(server);
    const lambda = new LambdaProvider({ apiKey: "k", baseUrl: server.url, sleep: async () => {} });
    const launch = { instanceType: A100_TYPE.name, region: "us-east-1", sshKeyNames: ["ops"], fileSystemNames: ["datasets"] };
    const spec = { image: null, env: {}, label: "fw-replace-x", diskGb: 512, launch };
    const offer = {
      id: `${A100_TYPE.name}@us-west-2`,
      machineId: null,
      gpuName: "A100 (40 GB SXM4)",
      gpuCount: 1,
      pricePerHour: 1.29,
      diskGb: 512,
      reliability: null,
    };
    await lambda.create(offer, spec);
    const sent = server.requests.find((r) => r.path === "/instance-operations/launch")!;
    expect(sent.body).toMatchObject({ region_name: "us-west-2", ssh_key_names: ["ops"], file_system_names: [] });
  });

  it("keeps every marker within Lambda's 60-character name, even for a 32-hex-digit Lambda id", () => {
    expect(MAX_MARKER).toBe(MAX_NAME);
    for (const now of [0, 1_800_000_000_000, 8_000_000_000_000_000]) {
      const marker = newMarker(OLD, now);
      expect(marker.length).toBeLessThanOrEqual(MAX_MARKER);
      expect(marker.startsWith("fw-replace-0920582c")).toBe(true);
    }
    expect(newMarker(OLD, 1)).not.toBe(newMarker(OLD, 1));
    expect(newMarker("7", 5).startsWith("fw-replace-7-5-")).toBe(true);
  });
});
