/**
 * The command line read and carried out: global options (`--agent`, `--url`, `--json`), one command
 * from cli/commands.ts or the policy commands `diff FILE` / `apply FILE`, and what to print with
 * which exit code (cli/exit-codes.ts). Pure of process: argv, env, a file reader and fetch come in,
 * so tests drive it against a running host.
 */
import { createApi, CliError, type Api } from "./api.ts";
import { COMMANDS, type Context, type Outcome } from "./commands.ts";
import { EXIT, type ExitCode } from "./exit-codes.ts";
import { describeChanges, parsePolicy, policyPatch, resolveSecrets, validatePolicy } from "./policy.ts";

export interface Io {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  readFile(path: string): Promise<string>;
  fetch?: typeof fetch;
  now?: number;
}

export interface Result {
  stdout: string;
  stderr: string;
  code: ExitCode;
}

const VALUED = new Set(["agent", "url", "note", "limit", "status"]);

export const USAGE = [
  "usage: fleetwarden [--agent ID] [--url URL] [--json] COMMAND [ARGS]",
  "",
  ...COMMANDS.map((c) => `  ${[c.name, ...c.args].join(" ").padEnd(20)}${c.summary}`),
  `  ${"diff FILE".padEnd(20)}what applying the policy file would change (exit 7 when it differs)`,
  `  ${"apply FILE".padEnd(20)}make the agent's settings what the policy file says (audited)`,
  "",
  "environment: FLEETWARDEN_URL (default http://localhost:8787), FLEETWARDEN_TOKEN (an operator token),",
  "FLEETWARDEN_AGENT (default: default). Exit codes: 0 ok, 1 unreachable/5xx, 2 usage, 3 unauthorised,",
  "4 not found, 5 refused, 6 waiting for approval, 7 diff differs, 8 status needs attention.",
].join("\n");

function parseArgs(argv: readonly string[]): { options: Record<string, string | true>; positional: string[] } {
  const options: Record<string, string | true> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
    if (VALUED.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new CliError(`--${name} needs a value`, EXIT.usage);
      options[name] = value;
    } else if (name === "json" || name === "help") options[name] = true;
    else throw new CliError(`unknown option --${name}`, EXIT.usage);
  }
  return { options, positional };
}

async function policy(ctx: Context, io: Io, file: string, apply: boolean): Promise<Outcome> {
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, EXIT.usage);
  }
  const parsed = parsePolicy(text, file);
  const agent = typeof ctx.options.agent === "string" ? ctx.agent : (parsed.agent ?? ctx.agent);
  const resolved = resolveSecrets(parsed.settings, io.env);
  validatePolicy(resolved);
  const current = await ctx.api.call("GET", `/api/agents/${encodeURIComponent(agent)}`);
  const stored = (current.body.settings ?? {}) as Record<string, unknown>;
  const { patch, changes } = policyPatch(stored, parsed.settings, resolved);
  const rename = parsed.name !== undefined && parsed.name !== current.body.name ? parsed.name : undefined;
  if (rename !== undefined) changes.unshift({ path: "name", from: current.body.name, to: rename, secret: false });
  const summary = `${agent}: ${describeChanges(changes)}`;
  if (!apply) return { data: { agent, changes, patch }, human: summary, code: changes.length > 0 ? EXIT.differs : EXIT.ok };
  if (changes.length === 0) return { data: { agent, changes }, human: summary };
  const body = { ...(rename !== undefined ? { name: rename } : {}), ...(Object.keys(patch).length > 0 ? { settings: patch } : {}) };
  await ctx.api.call("PATCH", `/api/agents/${encodeURIComponent(agent)}`, body);
  return { data: { agent, changes, applied: true }, human: `applied to ${summary}` };
}

export async function runCli(io: Io): Promise<Result> {
  try {
    const { options, positional } = parseArgs(io.argv);
    const [name, ...args] = positional;
    if (!name || options.help) return { stdout: USAGE, stderr: "", code: name || options.help ? EXIT.ok : EXIT.usage };
    const url = (typeof options.url === "string" ? options.url : io.env.FLEETWARDEN_URL) || "http://localhost:8787";
    const api: Api = createApi(url, io.env.FLEETWARDEN_TOKEN, io.fetch);
    const agent = (typeof options.agent === "string" ? options.agent : io.env.FLEETWARDEN_AGENT) || "default";
    const ctx: Context = { api, agent, options, now: io.now ?? Date.now() };
    let outcome: Outcome;
    if (name === "diff" || name === "apply") {
      if (!args[0]) throw new CliError(`${name} needs a policy FILE\n${USAGE}`, EXIT.usage);
      outcome = await policy(ctx, io, args[0], name === "apply");
    } else {
      const command = COMMANDS.find((c) => c.name === name);
      if (!command) throw new CliError(`unknown command "${name}"\n${USAGE}`, EXIT.usage);
      if (args.length < command.args.length) throw new CliError(`${name} needs ${command.args.join(" ")}`, EXIT.usage);
      outcome = await command.run(ctx, args);
    }
    const stdout = options.json ? JSON.stringify(outcome.data, null, 2) : outcome.human;
    return { stdout, stderr: "", code: outcome.code ?? EXIT.ok };
  } catch (err) {
    if (err instanceof CliError) return { stdout: "", stderr: `fleetwarden: ${err.message}`, code: err.exitCode };
    throw err;
  }
}
