/** The `fleetwarden` command's entry (cli/run.ts does the work): argv, env and files in, text and an exit code out. */
import { readFile } from "node:fs/promises";
import { runCli } from "./run.ts";

const result = await runCli({ argv: process.argv.slice(2), env: process.env, readFile: (path) => readFile(path, "utf8") });
if (result.stdout) console.log(result.stdout);
if (result.stderr) console.error(result.stderr);
process.exitCode = result.code;
