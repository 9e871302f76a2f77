/**
 * `.env` support for the Node host (functions/host/env-file.ts): the file's lines under the
 * environment, the environment winning, and a named-but-missing ENV_FILE refused at start-up.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withEnvFile } from "../../functions/host/env-file.ts";

const dir = mkdtempSync(join(tmpdir(), "fw-env-"));
const file = join(dir, "fleetwarden.env");
writeFileSync(file, '# a comment\nVAST_API_KEY=from-file\nPORT=9000\nQUOTED="a b"\n');

describe("the .env file of the Node host", () => {
  it("adds the file's variables and keeps the environment's own values over them", () => {
    const env = withEnvFile({ ENV_FILE: file, PORT: "8787" });
    expect(env.VAST_API_KEY).toBe("from-file");
    expect(env.QUOTED).toBe("a b");
    expect(env.PORT).toBe("8787");
  });

  it("refuses a named file that does not exist instead of starting without it", () => {
    expect(() => withEnvFile({ ENV_FILE: join(dir, "missing.env") })).toThrow(/ENV_FILE: .*missing\.env does not exist/);
  });

  it("leaves the environment as it is when no file is named and there is no .env", () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(withEnvFile({ PORT: "1" })).toEqual({ PORT: "1" });
    } finally {
      process.chdir(cwd);
    }
  });
});
