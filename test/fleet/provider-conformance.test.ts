/**
 * One contract every fleet provider keeps, run against Vast.ai, the simulator, RunPod and Lambda
 * Cloud (each through its strict stand-in over real HTTP, the simulator on a real libSQL
 * database): the list is the whole fleet (paged where the provider pages), get knows a listed
 * instance and answers null for an unknown one, each action the provider has changes what get
 * then reads, each one it lacks is a 501 ProviderError before any request, and a failure (5xx, a
 * bad key, a malformed answer) is a ProviderError, never an empty fleet. States are ours.
 */
import { afterEach, describe, expect, it } from "vitest";
import { INSTANCE_STATES, ProviderError, type Capability, type FleetProvider } from "../../fleet/providers/provider.ts";
import { LambdaProvider } from "../../fleet/providers/lambda.ts";
import { RunpodProvider } from "../../fleet/providers/runpod.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { createTestDb } from "../support/test-deps.ts";
import { A100_TYPE, lambdaInstanceRow, startLambdaServer } from "./lambda-server.ts";
import { runpodPodRow, startRunpodServer } from "./runpod-server.ts";
import { startVastServer, vastInstance } from "./vast-server.ts";
import { vastOffer } from "./vast-market.ts";

type Fault = "5xx" | "badKey" | "malformed";

interface Subject {
  provider: FleetProvider;
  ids: string[];
  unknownId: string;
  /** Requests the provider has sent so far (0 for the simulator, which sends none). */
  requests(): number;
  /** List pages the provider asked for (1 where the provider does not page). */
  listPages(): number;
  close(): Promise<void>;
}

interface Harness {
  kind: FleetProvider["kind"];
  make(fault?: Fault): Promise<Subject>;
}

const noSleep = { sleep: async () => {}, maxAttempts: 2 };
const hex = (n: number) => n.toString(16).padStart(32, "a");

const harnesses: Harness[] = [
  {
    kind: "vast",
    async make(fault) {
      const server = await startVastServer({
        apiKey: "vast-key",
        instances: [1, 2, 3, 4, 5].map((id) => vastInstance(id)),
        // Machines to rent, like the instances' (RTX 4090 ×2), priced apart so the order shows.
        offers: [vastOffer(901, { dph_total: 0.9 }), vastOffer(902, { dph_total: 0.5 }), vastOffer(903, { dph_total: 0.7 })],
        intercept: (req) =>
          fault === "5xx"
            ? { status: 500, body: { error: "boom" } }
            : fault === "malformed" && req.method === "GET"
              ? { body: { instances: "nope" } }
              : undefined,
      });
      const provider = new VastProvider({
        apiKey: fault === "badKey" ? "wrong" : "vast-key",
        baseUrl: server.url,
        pageSize: 2,
        ...noSleep,
      });
      const pages = () => server.requests.filter((r) => r.path === "/api/v1/instances/").length;
      return {
        provider,
        ids: ["1", "2", "3", "4", "5"],
        unknownId: "999",
        requests: () => server.requests.length,
        listPages: pages,
        close: server.close,
      };
    },
  },
  {
    kind: "simulator",
    async make(fault) {
      const db = await createTestDb();
      const provider = new SimulatorProvider(db, new FakeClock(), () => 0.99, 2);
      await provider.seed(5);
      if (fault) db.$client.close(); // the simulator's only fault: its database is gone
      return {
        provider,
        ids: [1, 2, 3, 4, 5].map((i) => `sim-${i}`),
        unknownId: "sim-999",
        requests: () => 0,
        listPages: () => 3,
        close: async () => {},
      };
    },
  },
  {
    kind: "runpod",
    async make(fault) {
      const server = await startRunpodServer({
        apiKey: "rp-key",
        pods: ["podaaa1", "podaaa2", "podaaa3"]
          .map((id) => runpodPodRow(id))
          .concat([runpodPodRow("podgone", { desiredStatus: "TERMINATED" })]),
        gpuTypes: [
          {
            id: "NVIDIA GeForce RTX 4090",
            displayName: "RTX 4090",
            memoryInGb: 24,
            lowestPrice: { minimumBidPrice: 0.3, uninterruptablePrice: 0.69 },
          },
        ],
        intercept: () =>
          fault === "5xx"
            ? { status: 500, body: { errors: [{ message: "internal" }] } }
            : fault === "malformed"
              ? { body: { data: { myself: { pods: "nope" }, pod: 7 } } }
              : undefined,
      });
      const provider = new RunpodProvider({ apiKey: fault === "badKey" ? "wrong" : "rp-key", url: server.url, ...noSleep });
      return {
        provider,
        ids: ["podaaa1", "podaaa2", "podaaa3"],
        unknownId: "podzzz9",
        requests: () => server.requests.length,
        listPages: () => 1,
        close: server.close,
      };
    },
  },
  {
    kind: "lambda",
    async make(fault) {
      const server = await startLambdaServer({
        apiKey: "lambda-key",
        instances: [1, 2, 3].map((n) => lambdaInstanceRow(hex(n))).concat([lambdaInstanceRow(hex(9), { status: "terminated" })]),
        instanceTypes: { [A100_TYPE.name]: { instance_type: A100_TYPE, regions_with_capacity_available: [{ name: "us-east-1" }] } },
        intercept: () =>
          fault === "5xx"
            ? { status: 500, body: { error: { code: "global/unknown", message: "boom" } } }
            : fault === "malformed"
              ? { body: { data: { instances: [] } } }
              : undefined,
      });
      const provider = new LambdaProvider({ apiKey: fault === "badKey" ? "wrong" : "lambda-key", baseUrl: server.url, ...noSleep });
      return {
        provider,
        ids: [1, 2, 3].map(hex),
        unknownId: hex(77),
        requests: () => server.requests.length,
        listPages: () => 1,
        close: server.close,
      };
    },
  },
];

const ACTIONS: Capability[] = ["start", "stop", "reboot", "destroy", "label", "logs", "create"];

function act(provider: FleetProvider, capability: Capability, id: string): Promise<unknown> {
  switch (capability) {
    case "start":
      return provider.start(id);
    case "stop":
      return provider.stop(id);
    case "reboot":
      return provider.reboot(id);
    case "destroy":
      return provider.destroy(id);
    case "label":
      return provider.setLabel(id, "relabelled");
    case "logs":
      return provider.logs(id, { tailLines: 10, maxChars: 1000 });
    case "create":
      return provider.offers({
        gpuName: "x",
        gpuCount: 1,
        minDiskGb: null,
        maxPricePerHour: null,
        minReliability: null,
        excludeMachineIds: [],
        limit: 1,
      });
    default:
      return Promise.resolve();
  }
}

/** What get reads after each action succeeded. */
const AFTER: Partial<Record<Capability, (i: Awaited<ReturnType<FleetProvider["get"]>>) => boolean>> = {
  stop: (i) => i?.state === "stopped",
  start: (i) => i?.state === "running" || i?.state === "loading",
  reboot: (i) => ["running", "loading", "rebooting"].includes(i?.state ?? ""),
  destroy: (i) => i === null || i.state === "offline",
  label: (i) => i?.label === "relabelled",
};

let open: Subject[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});
async function subject(h: Harness, fault?: Fault): Promise<Subject> {
  const s = await h.make(fault);
  open.push(s);
  return s;
}

describe.each(harnesses)("provider conformance: $kind", (h) => {
  it("lists the whole fleet (every page), in our states, without gone instances", async () => {
    const s = await subject(h);
    const listed = await s.provider.list();
    expect(listed.map((i) => i.id).sort()).toEqual([...s.ids].sort());
    for (const i of listed) expect(INSTANCE_STATES).toContain(i.state);
    // `telemetry` is a promise that a running instance's listing carries its GPU utilisation.
    const utils = listed.filter((i) => i.state === "running").map((i) => i.gpuUtil ?? null);
    if (s.provider.capabilities.has("telemetry")) expect(utils.some((u) => typeof u === "number" && u >= 0 && u <= 100)).toBe(true);
    else expect(utils.every((u) => u === null)).toBe(true);
    expect(s.listPages()).toBe(h.kind === "vast" || h.kind === "simulator" ? 3 : 1);
  });

  it("gets a listed instance and answers null for an unknown or malformed id", async () => {
    const s = await subject(h);
    expect((await s.provider.get(s.ids[0]!))?.id).toBe(s.ids[0]);
    expect(await s.provider.get(s.unknownId)).toBeNull();
    expect(await s.provider.get("not an id/../x")).toBeNull();
  });

  it.each(ACTIONS)("%s: done when a capability, else a 501 before any request", async (capability) => {
    const s = await subject(h);
    const before = s.requests();
    if (!s.provider.capabilities.has(capability)) {
      const err = await act(s.provider, capability, s.ids[0]!).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).status).toBe(501);
      expect(s.requests()).toBe(before);
      return;
    }
    if (capability === "start") await s.provider.stop(s.ids[0]!);
    await act(s.provider, capability, s.ids[0]!);
    const check = AFTER[capability];
    if (check) expect(check(await s.provider.get(s.ids[0]!))).toBe(true);
    expect(s.requests() > before || h.kind === "simulator").toBe(true);
  });

  it("create: offers cheapest first for the instance's GPU, and a created instance is then known", async () => {
    const s = await subject(h);
    if (!s.provider.capabilities.has("create")) return; // its 501 is checked above
    const like = (await s.provider.get(s.ids[0]!))!;
    const offers = await s.provider.offers({
      gpuName: like.gpuName!,
      gpuCount: like.gpuCount!,
      minDiskGb: null,
      maxPricePerHour: null,
      minReliability: null,
      excludeMachineIds: [],
      limit: 5,
    });
    expect(offers.length).toBeGreaterThan(0);
    expect(offers.map((o) => o.pricePerHour)).toEqual([...offers.map((o) => o.pricePerHour)].sort((a, b) => a - b));
    const created = await s.provider.create(offers[0]!, {
      image: "pytorch/pytorch:2.3",
      env: { JOB: "x" },
      label: "replacement-1",
      diskGb: 20,
    });
    const seen = await s.provider.get(created.id);
    expect(seen?.label).toBe("replacement-1");
    expect(["created", "loading", "running"]).toContain(seen?.state);
  });

  it("an action on an unknown instance is a ProviderError, not a silent success", async () => {
    const s = await subject(h);
    const capability = (["stop", "reboot", "destroy"] as const).find((c) => s.provider.capabilities.has(c))!;
    await expect(act(s.provider, capability, s.unknownId)).rejects.toBeInstanceOf(ProviderError);
  });

  it.each(["5xx", "badKey", "malformed"] as const)("%s: list and get fail with an error, never an empty fleet", async (fault) => {
    if (h.kind === "simulator" && fault !== "5xx") return; // no key, no wire format: its one fault is a lost database
    const s = await subject(h, fault);
    const listed = await s.provider.list().then(
      (l) => l,
      (e: unknown) => e,
    );
    expect(Array.isArray(listed)).toBe(false);
    if (h.kind !== "simulator") {
      expect(listed).toBeInstanceOf(ProviderError);
      if (fault === "badKey") expect((listed as ProviderError).status).toBe(401);
      await expect(s.provider.get(s.ids[0]!)).rejects.toBeInstanceOf(ProviderError);
    }
  });
});
