/**
 * Policy as a file: an agent's settings in one JSON file that can be reviewed in a pull request,
 * `{ "agent"?, "name"?, "settings": {…} }`, validated by the same settings table as the API
 * (runtime/agent-settings.ts). Secrets are never written in the file: a value `{"$env": "NAME"}` is
 * read from the CLI's environment when the file is applied. The file is the whole policy: a
 * setting the agent has and the file does not is removed (the deployment's default applies again),
 * except `mode`, the pause switch, which a policy file changes only when it names it.
 *
 * `policyPatch` turns the file and the agent's stored settings (as the API shows them, secrets
 * masked) into the JSON Merge Patch (RFC 7396) that `apply` sends and `diff` prints.
 */
import { agentSettingsSchema, maskKey, maskUrl } from "../runtime/agent-settings.ts";
import { EXIT } from "./exit-codes.ts";
import { CliError } from "./api.ts";

export interface Policy {
  agent?: string;
  name?: string;
  settings: Record<string, unknown>;
}

export interface Change {
  path: string;
  from: unknown;
  to: unknown;
  secret: boolean;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isSecretRef = (v: unknown): v is { $env: string } => isObject(v) && Object.keys(v).length === 1 && typeof v.$env === "string";

/** Keys the file leaves alone when it does not name them. */
const OPERATIONAL = new Set(["mode"]);

export function parsePolicy(text: string, source: string): Policy {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${source}: not JSON (${(err as Error).message})`, EXIT.usage);
  }
  if (!isObject(raw) || !isObject(raw.settings)) throw new CliError(`${source}: needs a "settings" object`, EXIT.usage);
  const extra = Object.keys(raw).filter((k) => !["agent", "name", "settings"].includes(k));
  if (extra.length > 0) throw new CliError(`${source}: unknown key ${extra.map((k) => `"${k}"`).join(", ")}`, EXIT.usage);
  if (raw.agent !== undefined && typeof raw.agent !== "string") throw new CliError(`${source}: "agent" must be a string`, EXIT.usage);
  if (raw.name !== undefined && typeof raw.name !== "string") throw new CliError(`${source}: "name" must be a string`, EXIT.usage);
  return raw as unknown as Policy;
}

/** The settings with every `{"$env": NAME}` read from `env`; a missing variable is named. */
export function resolveSecrets(settings: Json, env: Record<string, string | undefined>, at = "settings"): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(settings)) {
    if (isSecretRef(value)) {
      const secret = env[value.$env];
      if (!secret) throw new CliError(`${at}.${key}: environment variable ${value.$env} is not set`, EXIT.usage);
      out[key] = secret;
    } else out[key] = isObject(value) ? resolveSecrets(value, env, `${at}.${key}`) : value;
  }
  return out;
}

/** The file's settings checked like the API checks them: a bad value is refused here, naming it. */
export function validatePolicy(resolved: Json): void {
  const parsed = agentSettingsSchema.safeParse(resolved);
  if (parsed.success) return;
  const why = parsed.error.issues.map((i) => `settings.${i.path.join(".")}: ${i.message}`).join("; ");
  throw new CliError(`invalid policy: ${why}`, EXIT.refused);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** A stored secret is shown masked: it is unchanged when the file's value masks to the same text. */
const secretUnchanged = (stored: unknown, value: string) => stored === maskUrl(value) || stored === maskKey(value);

/**
 * The merge patch that makes `stored` what the file says, and its changes for humans. `file` is the
 * file's settings with secret references still in place (so a change to a secret is shown by name).
 */
export function policyPatch(stored: Json, file: Json, resolved: Json, at = ""): { patch: Json; changes: Change[] } {
  const patch: Json = {};
  const changes: Change[] = [];
  for (const [key, value] of Object.entries(resolved)) {
    const path = at ? `${at}.${key}` : key;
    const ref = file[key];
    if (isSecretRef(ref)) {
      if (secretUnchanged(stored[key], value as string)) continue;
      patch[key] = value;
      changes.push({ path, from: stored[key] ?? null, to: `$env ${ref.$env}`, secret: true });
    } else if (isObject(value)) {
      const inner = policyPatch(isObject(stored[key]) ? stored[key] : {}, ref as Json, value, path);
      if (Object.keys(inner.patch).length > 0) patch[key] = inner.patch;
      changes.push(...inner.changes);
    } else if (!same(stored[key], value)) {
      patch[key] = value;
      changes.push({ path, from: stored[key] ?? null, to: value, secret: false });
    }
  }
  for (const key of Object.keys(stored)) {
    if (key in resolved || (at === "" && OPERATIONAL.has(key))) continue;
    patch[key] = null;
    changes.push({ path: at ? `${at}.${key}` : key, from: stored[key], to: null, secret: false });
  }
  return { patch, changes };
}

const shown = (v: unknown) => (v === null ? "(default)" : typeof v === "string" && v.startsWith("$env ") ? v : JSON.stringify(v));

export function describeChanges(changes: readonly Change[]): string {
  if (changes.length === 0) return "no changes";
  return changes.map((c) => `~ ${c.path}: ${shown(c.from)} → ${shown(c.to)}`).join("\n");
}
