/**
 * Every bad setting the issue lists, given to `npm start` in a child process: it exits 1 with
 * exactly one line on stderr naming the variable and the problem, and no stack trace.
 *
 * The unauthorised-database case uses a server that answers every request 401 as Turso (sqld)
 * does for a bad token; @libsql/client 0.18.0 turns that into "Server returned HTTP status 401"
 * (node_modules/@libsql/hrana-client/lib-esm/http/stream.js `errorFromResponse`, hrana-client 0.10.0).
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_KINDS } from "../../fleet/actions/action-types.ts";
import { minimumContextBudget } from "../../functions/host/context-budget.ts";
import { APPROVABLE_ACTIONS } from "../../runtime/config.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { runStart } from "./start-process.ts";

let refusing: Server;
let refusingUrl: string;
let busyPort: Server;
let closedPort: number;

beforeAll(async () => {
  refusing = createServer((_req, res) => {
    res.writeHead(401, { "Content-Type": "text/plain" });
    res.end("Unauthorized");
  });
  await new Promise<void>((ready) => refusing.listen(0, "127.0.0.1", ready));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
  busyPort = createServer();
  await new Promise<void>((ready) => busyPort.listen(0, "0.0.0.0", ready));
  const probe = createTcpServer();
  await new Promise<void>((ready) => probe.listen(0, "127.0.0.1", ready));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((done) => probe.close(done));
});

afterAll(async () => {
  await new Promise((done) => refusing?.close(done));
  await new Promise((done) => busyPort?.close(done));
});

const base = () => ({
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
  DATABASE_URL: `file:${join(mkdtempSync(join(tmpdir(), "fw-refuse-")), "fw.db")}`,
  PORT: "0",
  SIMULATOR_INSTANCES: "0",
});

function readOnlyDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), "fw-readonly-"));
  chmodSync(dir, 0o777);
  const file = join(dir, "fw.db");
  writeFileSync(file, "");
  chmodSync(file, 0o444);
  return `file:${file}`;
}

const CASES: [string, () => Record<string, string>, RegExp, { asNobody?: boolean }?][] = [
  [
    "a postgres:// DATABASE_URL",
    () => ({ DATABASE_URL: "postgres://user@db.example/fleet" }),
    /^Configuration error: DATABASE_URL has the unsupported scheme postgres:\/\//,
  ],
  [
    "a relative path as DATABASE_URL",
    () => ({ DATABASE_URL: "./relative.db" }),
    /^Configuration error: DATABASE_URL is not a libSQL URL: use file:<path>/,
  ],
  [
    "an unreachable libSQL server",
    () => ({ DATABASE_URL: `http://127.0.0.1:${closedPort}` }),
    /^Configuration error: DATABASE_URL is unreachable after 3 attempts: /,
  ],
  [
    "a libSQL server refusing the credentials",
    () => ({ DATABASE_URL: refusingUrl, DATABASE_AUTH_TOKEN: "wrong" }),
    /^Configuration error: DATABASE_URL refused the credentials \(set or fix DATABASE_AUTH_TOKEN\): .*401/,
  ],
  [
    "a read-only database file",
    () => ({ DATABASE_URL: readOnlyDatabase() }),
    /^Configuration error: DATABASE_URL names \S+fw\.db, which is read-only/,
    { asNobody: true },
  ],
  [
    "a PORT already in use",
    () => ({ PORT: String((busyPort.address() as AddressInfo).port) }),
    /^Configuration error: PORT \d+ is already in use by another process: choose another PORT$/,
  ],
  [
    "a typo in APPROVAL_REQUIRED_ACTIONS",
    () => ({ APPROVAL_REQUIRED_ACTIONS: "start,destory" }),
    /^Configuration error: APPROVAL_REQUIRED_ACTIONS names unknown action "destory" \(known: start, stop, reboot, destroy, label, replace, rent\)$/,
  ],
  [
    "WEBHOOK_SECRET=whsec_",
    () => ({ WEBHOOK_SECRET: "whsec_" }),
    /^Configuration error: WEBHOOK_SECRET must be whsec_ followed by the base64 of 24 to 64 random bytes$/,
  ],
  [
    "WEBHOOK_SECRET with too short a key",
    () => ({ WEBHOOK_SECRET: "whsec_c2hvcnQ=" }),
    /^Configuration error: WEBHOOK_SECRET must be whsec_/,
  ],
  [
    "CONTEXT_BUDGET_TOKENS=100",
    () => ({ CONTEXT_BUDGET_TOKENS: "100" }),
    new RegExp(`^Configuration error: CONTEXT_BUDGET_TOKENS is 100; the minimum is ${minimumContextBudget().minimum} \\(`),
  ],
  [
    "SESSION_TTL_S past 400 days",
    () => ({ SESSION_TTL_S: "40000000" }),
    /^Configuration error: SESSION_TTL_S must be at most 34560000 \(400 days: browsers refuse a longer cookie\)$/,
  ],
  [
    "an empty APPROVAL_REQUIRED_ACTIONS list",
    () => ({ APPROVAL_REQUIRED_ACTIONS: "," }),
    /^Configuration error: APPROVAL_REQUIRED_ACTIONS lists no action: write "none" to require no approvals/,
  ],
  [
    "PUBLIC_URL=javascript:x",
    () => ({ PUBLIC_URL: "javascript:x" }),
    /^Configuration error: PUBLIC_URL must be an http:\/\/ or https:\/\/ URL \(got javascript:\)$/,
  ],
  [
    "QStash signing keys without PUBLIC_URL",
    () => ({ QSTASH_CURRENT_SIGNING_KEY: "sig_current", QSTASH_NEXT_SIGNING_KEY: "sig_next" }),
    /^Configuration error: PUBLIC_URL is required with QStash signing keys/,
  ],
];

describe("npm start refuses bad settings in one line", () => {
  it.concurrent.each(CASES)("refuses %s", { timeout: 120_000 }, async (_name, vars, message, options) => {
    const exited = await runStart({ ...base(), ...vars() }, options);
    expect(exited.code).toBe(1);
    const lines = exited.stderr.trim().split("\n");
    expect(lines, exited.stderr).toHaveLength(1);
    expect(exited.stderr).not.toContain("    at ");
    expect(lines[0]).toMatch(message);
  });

  it("knows the same action names as the fleet", () => {
    expect([...APPROVABLE_ACTIONS]).toEqual([...ACTION_KINDS]);
  });

  it("accepts the documented defaults and a budget at the minimum", async () => {
    const exited = await runStart(
      { ...base(), CONTEXT_BUDGET_TOKENS: String(minimumContextBudget().minimum) },
      { stopWhenStdout: /fleetwarden is running/ },
    );
    expect(exited.stderr).not.toMatch(/Configuration error/);
    expect(exited.stdout).toContain("fleetwarden is running");
    expect(exited.code).toBe(0);
  }, 120_000);
});
