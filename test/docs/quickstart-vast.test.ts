/**
 * docs/quickstart-vast.md followed literally (issue #38's done-when): a new user with only that
 * page reaches a supervised Vast.ai fleet whose instances report and whose approvals reach Slack.
 * The Node host is started as `npm start` starts it, with the page's settings; Vast.ai is the
 * strict fake (test/fleet/vast-server.ts, VAST_URL pointing at it), Slack the strict loopback
 * receivers (test/notify/receiver.ts for the incoming webhook, slack-receiver.ts for the click's
 * response_url). The reporter is the page's own shell block, run by bash with a stand-in
 * `nvidia-smi`; the Slack click is built from the button the message carried and signed with the
 * signing secret, as Slack signs it. Each step fails here if the page, the route or the feature
 * behind it goes.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { slackSignature } from "../../auth/slack-signature.ts";
import { type NodeHost, startNodeHost } from "../../functions/host/node-host.ts";
import { startVastServer, vastInstance } from "../fleet/vast-server.ts";
import { startReceiver } from "../notify/receiver.ts";
import { startResponseUrl } from "../notify/slack-receiver.ts";
import { waitFor } from "../support/child-process-waits.ts";
import { silentLogger } from "../support/silent-logger.ts";

const PAGE = readFileSync(join(import.meta.dirname, "../../docs/quickstart-vast.md"), "utf8");
const VAST_KEY = "vast-quickstart-key";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const SLACK_USER = "U024BE7LH";

const open: { close(): Promise<void> }[] = [];
const hosts: NodeHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
  await Promise.all(open.splice(0).map((s) => s.close()));
  vi.restoreAllMocks();
});

/** The page's reporter block, its endless loop replaced by one report. */
function reporterScript(): string {
  const block = /```sh\n(report\(\) \{[\s\S]*?)```/.exec(PAGE)?.[1];
  expect(block, "the page's reporter block").toBeDefined();
  const loop = "while true; do report; sleep 60; done";
  expect(block).toContain(loop);
  return `set -euo pipefail\n${block!.replace(loop, "report")}`;
}

/** A stand-in for the instance's `nvidia-smi`: two GPUs at 80 % and 94 %. */
function fakeNvidiaSmi(): string {
  const bin = mkdtempSync(join(tmpdir(), "fw-qs-bin-"));
  writeFileSync(join(bin, "nvidia-smi"), "#!/bin/sh\nprintf '80\\n94\\n'\n");
  chmodSync(join(bin, "nvidia-smi"), 0o755);
  return bin;
}

describe("the Vast.ai quick start, followed literally", () => {
  it("reaches a supervised Vast.ai fleet with a reporting instance and approvals decided in Slack", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {}); // the admin token printed once
    const vast = await startVastServer({ apiKey: VAST_KEY, instances: [vastInstance(20001, { gpu_util: null }), vastInstance(20002)] });
    const slack = await startReceiver("/services/T000/B000/XXX", 200, "slack");
    const responses = await startResponseUrl();
    open.push(vast, slack, responses);
    const dataDir = join(mkdtempSync(join(tmpdir(), "fw-quickstart-")), "data");
    mkdirSync(dataDir);
    // What `npm start` adds: the database in ./data; the fake stands in for console.vast.ai.
    const base = { PORT: "0", DATABASE_URL: `file:${join(dataDir, "fleetwarden.db")}`, VAST_URL: vast.url };

    // 1. The one key: `VAST_API_KEY=… npm start`.
    expect(PAGE).toContain("VAST_API_KEY=… npm start");
    const first = await startNodeHost({ ...base, VAST_API_KEY: VAST_KEY }, { log: silentLogger, cronIntervalMs: 3_600_000 });
    hosts.push(first);
    const T = readFileSync(join(dataDir, "admin-token"), "utf8").trim();
    const api = (host: NodeHost, path: string, init: RequestInit = {}) =>
      fetch(`${host.url}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${T}`, "content-type": "application/json", ...init.headers },
      });
    expect(await (await fetch(`${first.url}/healthz`)).json()).toMatchObject({ provider: "vast" });
    // "listed every minute": the minute's tick, now.
    expect((await api(first, "/api/cron", { method: "POST" })).status).toBeLessThan(300);
    const listed = await waitFor("the Vast.ai fleet listed", async () => {
      const { instances } = (await (await api(first, "/api/agents/default/instances")).json()) as {
        instances: { id: string; gpuUtil: number | null }[];
      };
      // Listed, with the GPU use Vast.ai reports (the listing is done before the instance reports).
      return instances.length === 2 && instances.some((i) => i.gpuUtil !== null) ? instances : undefined;
    });
    expect(listed.map((i) => i.id).sort()).toEqual(["20001", "20002"]);
    // The agent's first run takes in the fleet it was given (after the state debounce).
    await waitFor("the first run", async () => {
      const { runs } = (await (await api(first, "/api/agents/default/runs?limit=1")).json()) as { runs: { status: string }[] };
      return runs[0]?.status === "succeeded" ? runs : undefined;
    });
    expect(vast.requests.some((r) => r.path === "/api/v1/instances/" && r.authorization === `Bearer ${VAST_KEY}`)).toBe(true);

    // 2. The instance reports: the page's reporter, with FW, SECRET (data/webhook-secret) and ID. Vast.ai
    // lists no GPU use for it (gpu_util null); the report says 87 % (the mean of the two GPUs
    // nvidia-smi shows), and no later listing can overwrite that.
    const SECRET = readFileSync(join(dataDir, "webhook-secret"), "utf8").trim();
    // Asynchronously: the host answering the report runs in this process.
    const { stdout: out } = await promisify(execFile)("bash", ["-c", reporterScript()], {
      env: { ...process.env, PATH: `${fakeNvidiaSmi()}:${process.env.PATH}`, FW: first.url, SECRET, ID: "20001" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(JSON.parse(out)).toMatchObject({ duplicate: false });
    const reported = await waitFor("the report's GPU use on the instance", async () => {
      const { instances } = (await (await api(first, "/api/agents/default/instances")).json()) as { instances: Record<string, unknown>[] };
      const row = instances.find((i) => i.id === "20001");
      if (row?.reportsByWebhook === true && row.gpuUtil === 87) return row;
      throw new Error(
        `report ${out.trim()}, instance ${JSON.stringify({ gpuUtil: row?.gpuUtil, gpuUtilAt: row?.gpuUtilAt, byWebhook: row?.reportsByWebhook })}`,
      );
    });
    expect(reported).toBeDefined();
    await first.stop();
    hosts.splice(0);

    // 3. Slack in five steps: the manifest's app gives the webhook URL and the signing secret (steps
    // 1–3); restart with the four settings (step 4); map the approver (step 5).
    expect(PAGE).toContain("VAST_API_KEY=… SLACK_WEBHOOK_URL=… SLACK_SIGNING_SECRET=… PUBLIC_URL=…");
    const host = await startNodeHost(
      {
        ...base,
        VAST_API_KEY: VAST_KEY,
        SLACK_WEBHOOK_URL: slack.url,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        PUBLIC_URL: "https://fw.example",
        ALLOW_PRIVATE_URLS: "true", // the Slack stand-ins listen on loopback
      },
      { log: silentLogger, cronIntervalMs: 3_600_000 },
    );
    hosts.push(host);
    expect(PAGE).toContain(`"slackUserId":"${SLACK_USER}"`);
    const mapped = await api(host, "/api/operators", {
      method: "POST",
      body: JSON.stringify({ name: "ada", role: "operator", slackUserId: SLACK_USER }),
    });
    expect(mapped.status).toBe(201);

    // "Try it": ask for a destroy; the approval reaches Slack with its buttons.
    expect(PAGE).toContain(`-d '{"kind":"destroy"}' http://localhost:8787/api/agents/default/instances/<id>/actions`);
    const asked = await api(host, "/api/agents/default/instances/20001/actions", {
      method: "POST",
      body: JSON.stringify({ kind: "destroy" }),
    });
    expect(asked.status).toBe(202);
    const message = await waitFor("the approval in Slack", async () => {
      const hit = slack.received.find((r) => r.body.includes("fleetwarden_reject"));
      return hit
        ? (JSON.parse(hit.body) as { text: string; blocks: { type: string; block_id?: string; elements?: Record<string, string>[] }[] })
        : undefined;
    });
    expect(slack.rejected).toEqual([]);
    expect(message.text).toContain("destroy 20001");
    const actions = message.blocks.find((b) => b.type === "actions")!;
    const reject = actions.elements!.find((e) => e.action_id === "fleetwarden_reject")!;

    // Ada clicks Reject: Slack posts the click, signed, to the manifest's request URL.
    const payload = {
      type: "block_actions",
      user: { id: SLACK_USER, username: "ada", team_id: "T000" },
      api_app_id: "A000",
      container: { type: "message", message_ts: "1700000000.000100", channel_id: "C000", is_ephemeral: false },
      trigger_id: "1234.5678.abcd",
      response_url: responses.url,
      actions: [
        { type: "button", action_id: reject.action_id, block_id: actions.block_id, value: reject.value, action_ts: "1700000001.000200" },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const ts = String(Math.floor(Date.now() / 1000));
    const click = await fetch(`${host.url}/integrations/slack/interactions`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": await slackSignature(SIGNING_SECRET, ts, body),
      },
      body,
    });
    expect(click.status).toBe(200);

    // "the buttons are replaced with who decided, and nothing is destroyed".
    const replaced = await waitFor("the buttons replaced", async () => responses.received.find((r) => r.replace_original === true));
    expect(String(replaced.text)).toContain("ada");
    const { approvals } = (await (await api(host, "/api/agents/default/approvals")).json()) as { approvals: Record<string, unknown>[] };
    expect(approvals).toEqual([expect.objectContaining({ status: "rejected" })]);
    expect(vast.requests.filter((r) => r.method === "DELETE")).toEqual([]);
    expect(vast.instances.has(20001)).toBe(true);
  }, 120_000);
});
