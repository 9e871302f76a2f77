/**
 * The Vast.ai fake refuses what vast-cli never sends (test/fleet/vast-server.ts header), so a
 * client that drifts from vast-cli's request shapes fails its tests instead of passing them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startVastServer, vastInstance, type VastServer } from "./vast-server.ts";

let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const AUTH = { Authorization: "Bearer k" };
const LIST = "select_filters=%7B%7D&order_by=%5B%7B%22col%22%3A+%22id%22%2C+%22dir%22%3A+%22asc%22%7D%5D&limit=25";

async function status(path: string, init: RequestInit = {}) {
  const res = await fetch(`${server!.url}${path}`, init);
  return { status: res.status, body: await res.text() };
}

describe("the Vast.ai fake is strict", () => {
  it("refuses list queries vast-cli would not send", async () => {
    server = await startVastServer({ apiKey: "k", instances: [vastInstance(1)] });
    expect((await status(`/api/v1/instances/?${LIST}`, { headers: AUTH })).status).toBe(200);
    expect(await status(`/api/v1/instances/?limit=25&next_token=abc`, { headers: AUTH })).toMatchObject({
      status: 400,
      body: expect.stringContaining("next_token"),
    });
    expect(await status(`/api/v1/instances/?limit=25`, { headers: AUTH })).toMatchObject({
      status: 400,
      body: expect.stringContaining("missing query parameter: select_filters"),
    });
    expect((await status(`/api/v1/instances/?${LIST}&after_token=forged`, { headers: AUTH })).status).toBe(400);
    expect((await status(`/api/v1/instances/?${LIST.replace("limit=25", "limit=26")}`, { headers: AUTH })).status).toBe(400);
  });

  it("needs the Bearer key, owner=me on show, the right method and vast-cli's JSON bodies", async () => {
    server = await startVastServer({ apiKey: "k", instances: [vastInstance(1)] });
    expect((await status(`/api/v0/instances/1/?owner=me`)).status).toBe(401);
    expect((await status(`/api/v0/instances/1/?owner=me`, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await status(`/api/v0/instances/1/`, { headers: AUTH })).status).toBe(400);
    expect((await status(`/api/v0/instances/reboot/1/`, { headers: AUTH })).status).toBe(405);
    const json = { ...AUTH, "Content-Type": "application/json" };
    expect((await status(`/api/v0/instances/1/`, { method: "DELETE", headers: AUTH })).status).toBe(400);
    expect(
      (await status(`/api/v0/instances/1/`, { method: "PUT", headers: json, body: JSON.stringify({ state: "exploded" }) })).status,
    ).toBe(400);
    expect(
      (await status(`/api/v0/instances/1/?force=1`, { method: "PUT", headers: json, body: JSON.stringify({ state: "running" }) })).status,
    ).toBe(400);
    expect(server.instances.has(1)).toBe(true);
  });

  it("serves a log's result_url like a presigned link: no Authorization header, 404 until written", async () => {
    server = await startVastServer({ apiKey: "k", instances: [vastInstance(1)], logPollsBeforeReady: 1 });
    const res = await fetch(`${server.url}/api/v0/instances/request_logs/1/`, {
      method: "PUT",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: "{}",
    });
    const { result_url } = (await res.json()) as { result_url: string };
    expect((await fetch(result_url)).status).toBe(404);
    expect((await fetch(result_url, { headers: AUTH })).status).toBe(400);
    expect((await fetch(result_url)).status).toBe(200);
  });
});
