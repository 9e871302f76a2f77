/**
 * `.env` support for the Node host (the 24/7-on-a-box setup): the environment with the lines of
 * ENV_FILE (default `.env` in the working directory, when it exists) added under it, parsed by
 * dotenv. A variable already in the environment wins, so `FOO=1 npm start` and systemd's
 * Environment= override the file. ENV_FILE naming a missing file is a start-up refusal, not a
 * silent default: the operator meant that file.
 */
import { existsSync, readFileSync } from "node:fs";
import { parse } from "dotenv";

export function withEnvFile(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const named = env.ENV_FILE?.trim();
  const path = named || ".env";
  if (!existsSync(path)) {
    if (named) throw new Error(`ENV_FILE: ${path} does not exist`);
    return env;
  }
  const fromFile = parse(readFileSync(path));
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== "") merged[key] = value;
  return merged;
}
