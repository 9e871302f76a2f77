/**
 * The fleet provider interface (per agent: vast | runpod | lambda | simulator) and the one
 * instance model every provider maps its answers onto. An error from a provider is a
 * ProviderError, never an empty fleet. Each provider says what it can do (`capabilities`): tools,
 * the rules policy and the dashboard offer only those, and a call to one it lacks is a
 * ProviderError with status 501 naming the provider and the capability.
 */
export const INSTANCE_STATES = ["created", "loading", "running", "stopped", "frozen", "exited", "rebooting", "unknown", "offline"] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

export interface FleetInstance {
  id: string;
  state: InstanceState;
  label: string | null;
  gpuName: string | null;
  gpuCount: number | null;
  pricePerHour: number | null;
  statusMessage: string | null;
  /** ms epoch */
  startedAt: number | null;
  /** Latest GPU utilisation, 0-100 %; null or absent when the provider does not say. */
  gpuUtil?: number | null;
  /** Disk in use, 0-100 % of the instance's disk. */
  diskUsedPct?: number | null;
  /** $/h the instance still costs while stopped (its storage); pricePerHour is while running. */
  storagePerHour?: number | null;
  /** The rental contract's end, ms epoch. */
  endsAt?: number | null;
  /** An interruptible (bid) rental: a higher bid can stop it. */
  interruptible?: boolean | null;
  /** Why a stopped instance is stopped, when the provider's answer says: "outbid" (a higher bid). */
  stopReason?: StopReason | null;
  /** The provider's machine (host) the instance runs on; a replacement excludes it. */
  machineId?: string | null;
  /** The instance's disk, GB. */
  diskGb?: number | null;
  /** The host's reliability score, 0-1, when the provider has one. */
  reliability?: number | null;
  /** What a like-for-like replacement is made from; absent when the provider's answer lacks it. */
  spec?: InstanceSpec | null;
}

export const PROVIDER_KINDS = ["vast", "runpod", "lambda", "simulator"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * What a provider can do. `telemetry`: its listing carries GPU utilisation; `logs`: container
 * logs; `create`: offers() and create(). Lambda Cloud has no stop (only terminate).
 */
export const CAPABILITIES = ["start", "stop", "reboot", "destroy", "label", "logs", "create", "telemetry"] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** What a new instance is made from: the old instance's image, template, environment, label and disk. */
export interface InstanceSpec {
  image: string | null;
  /** The provider's template id or hash, when the instance was made from one. */
  templateId?: string | null;
  env: Record<string, string>;
  /** The container's start command (Vast.ai `onstart`, RunPod `dockerArgs`), when known. */
  onstart?: string | null;
  label: string | null;
  diskGb: number | null;
  /** Exposed ports as RunPod takes them ("8888/http,22/tcp"), when the provider has them. */
  ports?: string | null;
  /** The pod's volume (RunPod `volumeInGb`, `volumeMountPath`), kept across a replacement. */
  volumeGb?: number | null;
  volumeMountPath?: string | null;
  /** What Lambda Cloud launches from (it reports no image): fleet/providers/lambda-instance.ts. */
  launch?: LaunchSpec | null;
}

/** A Lambda Cloud instance's launch: its type, region, SSH key and file system names. */
export interface LaunchSpec {
  instanceType: string;
  region: string;
  sshKeyNames: string[];
  fileSystemNames: string[];
}

/** Offers like an instance: same GPU model and count, at least its disk, within a price and reliability. */
export interface OfferQuery {
  gpuName: string;
  gpuCount: number;
  minDiskGb: number | null;
  maxPricePerHour: number | null;
  minReliability: number | null;
  /** Machines never offered (the dead instance's own host). */
  excludeMachineIds: string[];
  /** At most this many offers, cheapest first. */
  limit: number;
}

/** A rentable machine, as the provider offers it. */
export interface Offer {
  id: string;
  machineId: string | null;
  gpuName: string;
  gpuCount: number;
  pricePerHour: number;
  diskGb: number | null;
  reliability: number | null;
}

/**
 * Every provider's last step on its offers: the query's price cap, cheapest first (ties by id,
 * so the same answer always picks the same offer), at most the query's limit.
 */
export function cheapestWithin(offers: readonly Offer[], query: Pick<OfferQuery, "maxPricePerHour" | "limit">): Offer[] {
  return offers
    .filter((o) => query.maxPricePerHour === null || o.pricePerHour <= query.maxPricePerHour)
    .sort((a, b) => a.pricePerHour - b.pricePerHour || a.id.localeCompare(b.id))
    .slice(0, Math.max(0, query.limit));
}

/**
 * The offers that meet the whole query — GPU model and count exactly, not on an excluded machine,
 * at least its disk and reliability (unknown counts as none) — cheapest within its price cap.
 * What a provider whose answer might ignore a filter re-checks, so it cannot rent the wrong machine.
 */
export function meetingQuery(offers: readonly Offer[], query: OfferQuery): Offer[] {
  const excluded = new Set(query.excludeMachineIds);
  const like = offers.filter(
    (o) =>
      o.gpuName === query.gpuName &&
      o.gpuCount === query.gpuCount &&
      (o.machineId === null || !excluded.has(o.machineId)) &&
      (query.minDiskGb === null || (o.diskGb ?? 0) >= query.minDiskGb) &&
      (query.minReliability === null || (o.reliability ?? 0) >= query.minReliability),
  );
  return cheapestWithin(like, query);
}

/** The provider's answer to a create: the new instance's id (Vast.ai's `new_contract`). */
export interface CreatedInstance {
  id: string;
}

/** The one stop reason the fleet knows: a higher bid took an interruptible instance's GPU. */
export type StopReason = "outbid";

/** Per-call options of an action: the caller's deadline, as a signal (retries stop when it aborts). */
export interface ProviderCall {
  signal?: AbortSignal;
}

export interface FleetProvider {
  readonly kind: ProviderKind;
  readonly capabilities: ReadonlySet<Capability>;
  list(): Promise<FleetInstance[]>;
  /** null when the provider does not know the instance. */
  get(id: string): Promise<FleetInstance | null>;
  start(id: string, call?: ProviderCall): Promise<void>;
  stop(id: string, call?: ProviderCall): Promise<void>;
  reboot(id: string, call?: ProviderCall): Promise<void>;
  destroy(id: string, call?: ProviderCall): Promise<void>;
  setLabel(id: string, label: string, call?: ProviderCall): Promise<void>;
  /**
   * The last `tailLines` lines of the instance's container log (why a container exited), cut to
   * at most `maxChars` from the end. A ProviderError with status 404 for an unknown instance.
   */
  logs(id: string, request: LogRequest): Promise<InstanceLogs>;
  /** Offers matching the query, cheapest first (capability `create`). */
  offers(query: OfferQuery, call?: ProviderCall): Promise<Offer[]>;
  /**
   * Rents `offer` with `spec` (capability `create`). Not idempotent at any provider: callers
   * record that they are about to call it first and never call it twice for one purpose.
   */
  create(offer: Offer, spec: InstanceSpec, call?: ProviderCall): Promise<CreatedInstance>;
  /**
   * The account's credit balance in USD (fleet/providers/account-balance.ts), where the provider
   * has an API for it: absent when it has none (Lambda Cloud).
   */
  balance?(call?: ProviderCall): Promise<number>;
}

/** The ProviderError for a capability the provider does not have. */
export function unsupported(kind: ProviderKind, capability: Capability): ProviderError {
  return new ProviderError(
    `${kind} cannot ${capability === "create" ? "rent new instances" : capability} (not a capability of this provider)`,
    501,
  );
}

export interface LogRequest {
  tailLines: number;
  maxChars: number;
}

export interface InstanceLogs {
  /** The log's tail, oldest line first. */
  text: string;
  /** True when the log had more than `maxChars` and its head was cut. */
  truncated: boolean;
}

/** Keeps the end of a log: at most `maxChars`, cut on a line boundary when one is near. */
export function tailOfLog(text: string, maxChars: number): InstanceLogs {
  const cleaned = text.replace(/\n\s*\n/g, "\n").replace(/\s+$/, "");
  if (cleaned.length <= maxChars) return { text: cleaned, truncated: false };
  let tail = cleaned.slice(cleaned.length - maxChars);
  const firstBreak = tail.indexOf("\n");
  if (firstBreak >= 0 && firstBreak < maxChars / 4) tail = tail.slice(firstBreak + 1);
  // Never start on the low half of a surrogate pair.
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1);
  return { text: tail, truncated: true };
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly retryable = false,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}
