/**
 * The Vast.ai fake's market refuses what Vast.ai refuses (test/fleet/vast-market.ts header): a
 * search or create body with an unknown field, a missing one, a value out of the docs' bounds, the
 * wrong method, each with Vast's `{success: false, error, msg}` shape, and writes nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startVastServer, vastOffer, type VastServer } from "./vast-server.ts";

let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const JSON_AUTH = { Authorization: "Bearer k", "Content-Type": "application/json" };
const SEARCH = { verified: { eq: true }, rentable: { eq: true }, order: [["dph_total", "asc"]], type: "on-demand", allocated_storage: 5 };
const CREATE = { client_id: "me", image: "pytorch/pytorch", env: {}, disk: 20, label: null, runtype: "ssh" };

async function send(method: string, path: string, body: unknown) {
  const res = await fetch(`${server!.url}${path}`, { method, headers: JSON_AUTH, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the Vast.ai fake's market is strict", () => {
  it("searches with vast-cli's body and refuses unknown fields, operators, a missing order, type or storage", async () => {
    server = await startVastServer({ apiKey: "k", offers: [vastOffer(1, { dph_total: 0.9 }), vastOffer(2, { dph_total: 0.4 })] });
    const found = await send("POST", "/api/v0/bundles/", SEARCH);
    expect(found.status).toBe(200);
    expect((found.body.offers as { id: number }[]).map((o) => o.id)).toEqual([2, 1]);
    for (const [bad, says] of [
      [{ ...SEARCH, gpu_model: { eq: "RTX 4090" } }, "unknown search field: gpu_model"],
      [{ ...SEARCH, num_gpus: { about: 2 } }, "unknown operator about"],
      [{ ...SEARCH, machine_id: { notin: 7 } }, "takes a list"],
      [{ ...SEARCH, order: undefined }, "missing order"],
      [{ ...SEARCH, type: "spot" }, "unknown type"],
      [{ ...SEARCH, allocated_storage: undefined }, "missing allocated_storage"],
    ] as const) {
      const answer = await send("POST", "/api/v0/bundles/", bad);
      expect(answer, says).toMatchObject({
        status: 400,
        body: { success: false, error: "invalid_request", msg: expect.stringContaining(says) },
      });
    }
    expect((await fetch(`${server.url}/api/v0/bundles/`, { headers: JSON_AUTH })).status).toBe(405);
  });

  it("refuses a create body Vast.ai refuses, renting nothing", async () => {
    server = await startVastServer({ apiKey: "k", offers: [vastOffer(1)] });
    for (const [bad, says] of [
      [{ ...CREATE, gpu: "any" }, "unknown field: gpu"],
      [{ ...CREATE, client_id: undefined }, "client_id"],
      [{ ...CREATE, image: undefined }, "image is required"],
      [{ ...CREATE, disk: 4 }, "at least 8 GB"],
      [{ ...CREATE, label: "x".repeat(257) }, "label is longer than 256"],
      [{ ...CREATE, env: { A: 1 } }, "env must be an object of strings"],
      [{ ...CREATE, runtype: "rdp" }, "unknown runtype"],
      [{ ...CREATE, price: 500 }, "price"],
    ] as const) {
      const answer = await send("PUT", "/api/v0/asks/1/", bad);
      expect(answer, says).toMatchObject({
        status: 400,
        body: { success: false, error: "invalid_args", msg: expect.stringContaining(says) },
      });
    }
    expect(server.created).toEqual([]);
    expect(server.offers.get(1)).toMatchObject({ rented: false, rentable: true });
    expect((await send("POST", "/api/v0/asks/1/", CREATE)).status).toBe(405);
    expect(await send("PUT", "/api/v0/asks/9/", CREATE)).toMatchObject({ status: 404, body: { success: false, ask_id: 9 } });
    expect((await send("PUT", "/api/v0/asks/1/", CREATE)).body).toMatchObject({ success: true, new_contract: server.created[0] });
  });
});
