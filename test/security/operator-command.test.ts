/**
 * `npm run operator -- add NAME --role operator`: the token it prints once authenticates as that
 * operator with that role; the database keeps only its hash; mistakes are one-line usage errors;
 * revoke ends the token.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { runOperatorCommand, UsageError } from "../../functions/host/operator-command.ts";
import { openDatabase } from "../../db/client.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("npm run operator", () => {
  it("adds an operator whose printed token works with its role, lists and revokes it", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "fw-operator-")), "fw.db");
    const env = { DATABASE_URL: `file:${file}` };
    const added = await runOperatorCommand(["add", "ana", "--role", "operator"], env);
    const token = added.split("\n")[1]!;
    expect(added).toMatch(/^added ana \(operator, id 1\)\. Token, shown once:\nfwo_[0-9a-f]{64}$/);

    const client = createClient({ url: `file:${file}` });
    const stored = await client.execute("select token_hash from operators");
    expect(JSON.stringify(stored.rows)).not.toContain(token);
    const deps = await createTestDeps({ db: openDatabase(client) });
    const app = buildApp(() => deps);
    const as = (path: string, init: RequestInit = {}) =>
      app.request(path, { ...init, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" } });
    expect((await as("/api/agents/default/trigger", { method: "POST", body: "{}" })).status).toBe(202);
    expect((await as("/api/operators")).status).toBe(403);

    expect(await runOperatorCommand(["list"], env)).toMatch(/^1\tana\toperator\tactive$/);
    expect(await runOperatorCommand(["revoke", "1"], env)).toBe("revoked ana: its token and sessions no longer work");
    expect((await as("/api/agents/default")).status).toBe(401);
    client.close();
  });

  it("refuses a bad role, a missing name or an unknown command with a usage line", async () => {
    const env = { DATABASE_URL: `file:${join(mkdtempSync(join(tmpdir(), "fw-operator-")), "fw.db")}` };
    await expect(runOperatorCommand(["add", "bo", "--role", "boss"], env)).rejects.toThrow(
      /^role: must be one of viewer, operator, admin; usage:/,
    );
    await expect(runOperatorCommand(["add", "--role", "viewer"], env)).rejects.toThrow(UsageError);
    await expect(runOperatorCommand(["remove", "x"], env)).rejects.toThrow(/^usage: npm run operator/);
    await expect(runOperatorCommand(["add", "admin", "--role", "viewer"], env)).rejects.toThrow(/reserved for the ADMIN_TOKEN holder/);
  });
});
