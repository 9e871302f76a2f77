/**
 * The `fleetwarden` CLI against a running Node host over HTTP (embedded libSQL file, simulator
 * fleet): tables for humans, the API's own answer with --json, exit codes that mean something
 * (usage, unauthorised, not found, refused, waiting for approval, diff differs), and a policy file
 * round trip: diff shows what apply would change, apply makes it so, diff then shows nothing.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeHost } from "../../functions/host/node-host.ts";
import { runCli } from "../../cli/run.ts";
import { EXIT } from "../../cli/exit-codes.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";

let host: Awaited<ReturnType<typeof startNodeHost>>;
const files = new Map<string, string>();
const SLACK = "https://hooks.slack.com/services/T0000/B0000/abcdefghijklmnop";

const cli = (argv: string[], env: Record<string, string | undefined> = {}) =>
  runCli({
    argv,
    env: { FLEETWARDEN_URL: host.url, FLEETWARDEN_TOKEN: TEST_ADMIN_TOKEN, ...env },
    readFile: async (path) => {
      const text = files.get(path);
      if (text === undefined) throw new Error("no such file");
      return text;
    },
  });

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${host.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
};

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "fw-cli-"));
  host = await startNodeHost(
    {
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      PORT: "0",
      DATABASE_URL: `file:${join(dir, "fw.db")}`,
      SIMULATOR_INSTANCES: "2",
      SIMULATOR_FAILURE_RATE: "0",
      APPROVAL_REQUIRED_ACTIONS: "destroy,reboot",
    },
    { log: silentLogger, cronIntervalMs: 3_600_000 },
  );
  await api("POST", "/api/cron");
});

afterAll(async () => {
  await host?.stop();
});

describe("the fleetwarden CLI", () => {
  it("lists the fleet as a table, and --json prints the API's own answer", async () => {
    const human = await cli(["instances"]);
    expect(human.code).toBe(EXIT.ok);
    expect(human.stdout.split("\n")[0]).toMatch(/^ID\s+STATE\s+GPU\s+\$\/H/);
    const listed = (await api("GET", "/api/agents/default/instances")).instances as { id: string }[];
    expect(listed.length).toBe(2);
    for (const { id } of listed) expect(human.stdout).toContain(id);

    const json = await cli(["--json", "instances"]);
    expect((JSON.parse(json.stdout).instances as { id: string }[]).map((i) => i.id)).toEqual(listed.map((i) => i.id));
  });

  it("acts through the operator API: a stop is done, a reboot waits for approval (exit 6) and approve carries it", async () => {
    const [first] = (await api("GET", "/api/agents/default/instances")).instances as { id: string }[];
    const stopped = await cli(["stop", first!.id]);
    expect(stopped).toMatchObject({ code: EXIT.ok });
    expect(stopped.stdout).toContain(`stop ${first!.id}`);

    const asked = await cli(["reboot", first!.id, "--note", "from the cli test"]);
    expect(asked.code).toBe(EXIT.pendingApproval);
    const pending = await cli(["--json", "approvals"]);
    const approval = (JSON.parse(pending.stdout).approvals as { id: number; kind: string }[]).find((a) => a.kind === "reboot");
    expect(approval).toBeDefined();
    expect((await cli(["approvals"])).stdout).toMatch(new RegExp(`^${approval!.id}\\s+reboot`, "m"));

    expect((await cli(["approve", String(approval!.id)])).code).toBe(EXIT.ok);
    const decided = (await api("GET", "/api/agents/default/approvals?status=approved")).approvals as { id: number }[];
    expect(decided.map((a) => a.id)).toContain(approval!.id);
    // Deciding twice is a conflict the server names: refused, not a crash.
    const again = await cli(["reject", String(approval!.id)]);
    expect(again.code).toBe(EXIT.refused);
    expect(again.stderr).toContain("409");
  });

  it("pause and resume switch the agent's mode", async () => {
    expect((await cli(["pause"])).stdout).toContain("paused");
    expect((await api("GET", "/api/agents/default/mode")).mode).toBe("shadow");
    expect((await cli(["pause"])).stdout).toContain("already paused");
    await cli(["resume"]);
    expect((await api("GET", "/api/agents/default/mode")).mode).toBe("act");
  });

  it("exit codes: usage 2, no token 3, unknown agent 4, unreachable 1", async () => {
    expect((await cli(["frobnicate"])).code).toBe(EXIT.usage);
    expect((await cli(["stop"])).code).toBe(EXIT.usage);
    const anonymous = await cli(["instances"], { FLEETWARDEN_TOKEN: undefined });
    expect(anonymous.code).toBe(EXIT.unauthorised);
    expect(anonymous.stderr).toContain("FLEETWARDEN_TOKEN");
    expect((await cli(["--agent", "nobody", "status"])).code).toBe(EXIT.notFound);
    expect((await cli(["status"], { FLEETWARDEN_URL: "http://127.0.0.1:9" })).code).toBe(EXIT.unreachable);
  });

  it("status says mode, spend and health, exit 0 when healthy", async () => {
    const status = await cli(["status"]);
    expect(status.stdout).toMatch(/agent default: acting/);
    expect(status.stdout).toMatch(/spend today \$\d+\.\d\d/);
    const health = await api("GET", "/api/agents/default/health");
    expect(status.code).toBe(health.ok ? EXIT.ok : EXIT.attention);
  });

  it("a policy file round-trips: diff shows the change, apply makes it, diff is then clean; a secret is a reference", async () => {
    files.set(
      "team.json",
      JSON.stringify({
        name: "Team default",
        settings: { idleStopAfterS: 1800, spendLimitPerDayUsd: 40, channels: { slack: { $env: "TEAM_SLACK" } } },
      }),
    );
    const env = { TEAM_SLACK: SLACK };
    const before = await cli(["diff", "team.json"], env);
    expect(before.code).toBe(EXIT.differs);
    expect(before.stdout).toContain("idleStopAfterS: (default) → 1800");
    expect(before.stdout).toContain("channels.slack: (default) → $env TEAM_SLACK");
    expect(before.stdout).not.toContain("abcdefghijklmnop");

    expect((await cli(["apply", "team.json"], env)).code).toBe(EXIT.ok);
    const agent = await api("GET", "/api/agents/default");
    expect(agent.name).toBe("Team default");
    expect(agent.settings).toMatchObject({ idleStopAfterS: 1800, spendLimitPerDayUsd: 40 });
    expect((agent.settings as { channels: { slack: string } }).channels.slack).not.toContain("abcdefghijklmnop");

    const after = await cli(["diff", "team.json"], env);
    expect(after).toMatchObject({ code: EXIT.ok });
    expect(after.stdout).toContain("no changes");

    // A setting the file drops is removed (the default applies again); the pause switch is left alone.
    await cli(["pause"]);
    files.set("team.json", JSON.stringify({ settings: { idleStopAfterS: 1800, channels: { slack: { $env: "TEAM_SLACK" } } } }));
    const dropped = await cli(["apply", "team.json"], env);
    expect(dropped.stdout).toContain("spendLimitPerDayUsd: 40 → (default)");
    const settings = (await api("GET", "/api/agents/default")).settings as Record<string, unknown>;
    expect(settings.spendLimitPerDayUsd).toBeUndefined();
    expect(settings.mode).toBe("shadow");
    await cli(["resume"]);
  });

  it("a bad policy is refused before anything is written, naming the field; a missing secret variable is named", async () => {
    const stored = JSON.stringify((await api("GET", "/api/agents/default")).settings);
    files.set("bad.json", JSON.stringify({ settings: { idleStopAfterS: -5 } }));
    const bad = await cli(["apply", "bad.json"]);
    expect(bad.code).toBe(EXIT.refused);
    expect(bad.stderr).toContain("settings.idleStopAfterS");
    files.set("secret.json", JSON.stringify({ settings: { channels: { slack: { $env: "NOT_SET_ANYWHERE" } } } }));
    const missing = await cli(["apply", "secret.json"]);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain("NOT_SET_ANYWHERE");
    expect((await cli(["apply", "nowhere.json"])).code).toBe(EXIT.usage);
    expect(JSON.stringify((await api("GET", "/api/agents/default")).settings)).toBe(stored);
  });

  it("the installed bin runs the same CLI (npx fleetwarden)", async () => {
    // Asynchronously: the host answering it lives in this process.
    const run = await promisify(execFile)(process.execPath, ["cli/fleetwarden.mjs", "--json", "agents"], {
      env: { ...process.env, FLEETWARDEN_URL: host.url, FLEETWARDEN_TOKEN: TEST_ADMIN_TOKEN },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect((JSON.parse(run.stdout).agents as { id: string }[]).map((a) => a.id)).toContain("default");
  });
});
