/**
 * The one place a FleetProvider is built from a kind and an account (key, URL): the host's default
 * (PROVIDER, or whichever provider's key is set, else the simulator) and an agent's own (its
 * `provider` setting, the key falling back to the environment's key for that kind). The
 * environment's key for a kind goes only to that kind's own host (the origin of VAST_URL,
 * RUNPOD_URL, LAMBDA_URL; RunPod's REST base is derived from RUNPOD_URL: fleet/providers/runpod.ts
 * restBaseFor): a per-agent `provider.url` elsewhere needs its own `provider.apiKey`, or
 * anyone who may edit settings could have the deployment's key sent to a host of theirs. An agent
 * whose provider has no key anywhere gets a provider whose every call is a ProviderError naming
 * why, never the host's account: acting on another account's instances would be worse than not
 * acting, and an error is never read as an empty fleet.
 */
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { Config } from "../../runtime/config.ts";
import type { AgentSettings } from "../../runtime/agent-settings.ts";
import { LambdaProvider } from "./lambda.ts";
import { ProviderError, type Capability, type FleetProvider, type ProviderKind } from "./provider.ts";
import { RunpodProvider } from "./runpod.ts";
import { SimulatorProvider } from "./simulator.ts";
import { VastProvider } from "./vast.ts";

export interface ProviderAccount {
  apiKey?: string | undefined;
  url?: string | undefined;
}

type ProviderSetting = NonNullable<AgentSettings["provider"]>;

/** Builds the provider; a ProviderError (400) when a provider that needs a key has none. */
export function providerFor(kind: ProviderKind, account: ProviderAccount, db: Db, clock: Clock, config: Config): FleetProvider {
  if (kind === "simulator") return new SimulatorProvider(db, clock);
  const apiKey = account.apiKey;
  if (!apiKey) throw new ProviderError(missingKey(kind), 400);
  switch (kind) {
    case "vast":
      return new VastProvider({ apiKey, baseUrl: account.url ?? config.vast.url });
    case "runpod":
      return new RunpodProvider({ apiKey, url: account.url ?? config.runpod.url, now: () => clock.now() });
    case "lambda":
      return new LambdaProvider({ apiKey, baseUrl: account.url ?? config.lambda.url });
  }
}

function missingKey(kind: ProviderKind): string {
  return `provider ${kind} needs an API key: give provider.apiKey or set ${kind.toUpperCase()}_API_KEY`;
}

/** The environment's account for `kind`. */
function envAccount(config: Config, kind: Exclude<ProviderKind, "simulator">): ProviderAccount {
  return config[kind];
}

/** The host's provider: the configured kind with its key; the simulator when that kind has no key. */
export function defaultProvider(config: Config, db: Db, clock: Clock): FleetProvider {
  const kind = config.provider;
  if (kind === "simulator" || !envAccount(config, kind).apiKey) return new SimulatorProvider(db, clock);
  return providerFor(kind, envAccount(config, kind), db, clock, config);
}

/**
 * Why this provider setting cannot work here (no key in the setting nor the environment, or a URL
 * off the kind's own host with no key of its own), or null.
 */
export function providerSettingProblem(setting: ProviderSetting | undefined, config: Config): string | null {
  if (!setting || setting.kind === "simulator" || setting.apiKey) return null;
  const env = envAccount(config, setting.kind);
  if (setting.url && !sameOrigin(setting.url, env.url)) return foreignUrl(setting.kind, setting.url, env.url);
  return env.apiKey ? null : missingKey(setting.kind);
}

function foreignUrl(kind: Exclude<ProviderKind, "simulator">, url: string, envUrl: string | undefined): string {
  return `provider.url ${JSON.stringify(url)} needs its own provider.apiKey: ${kind.toUpperCase()}_API_KEY is sent only to ${kind}'s own host (${originOf(envUrl) ?? "unset"})`;
}

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

function sameOrigin(a: string, b: string | undefined): boolean {
  const origin = originOf(a);
  return origin !== null && origin === originOf(b);
}

/**
 * The provider an agent with this setting acts through: the host's own when the setting names the
 * host's kind and account (so the simulator and injected providers stay one), else its own.
 */
export function agentProvider(host: FleetProvider, setting: ProviderSetting, db: Db, clock: Clock, config: Config): FleetProvider {
  const sameAccount = setting.kind === host.kind && !setting.apiKey && !setting.url;
  if (sameAccount) return host;
  const problem = providerSettingProblem(setting, config);
  if (problem) return new UnusableProvider(setting.kind, problem);
  const account = setting.kind === "simulator" ? {} : { ...envAccount(config, setting.kind), ...definedOnly(setting) };
  try {
    return providerFor(setting.kind, account, db, clock, config);
  } catch (err) {
    if (err instanceof ProviderError) return new UnusableProvider(setting.kind, err.message);
    throw err;
  }
}

function definedOnly(setting: ProviderSetting): ProviderAccount {
  return { ...(setting.apiKey ? { apiKey: setting.apiKey } : {}), ...(setting.url ? { url: setting.url } : {}) };
}

/** A provider that cannot be reached as configured: every call says why (status 400), none lists empty. */
class UnusableProvider implements FleetProvider {
  readonly capabilities: ReadonlySet<Capability> = new Set();
  constructor(
    readonly kind: ProviderKind,
    private readonly why: string,
  ) {}
  private fail(): never {
    throw new ProviderError(`this agent's provider is unusable: ${this.why}`, 400);
  }
  list = async () => this.fail();
  get = async () => this.fail();
  start = async () => this.fail();
  stop = async () => this.fail();
  reboot = async () => this.fail();
  destroy = async () => this.fail();
  setLabel = async () => this.fail();
  logs = async () => this.fail();
  offers = async () => this.fail();
  create = async () => this.fail();
}
