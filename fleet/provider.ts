/**
 * The fleet provider interface (chosen at start-up: vast | simulator) and the one instance model
 * every provider maps its answers onto. An error from a provider is a ProviderError, never an
 * empty fleet.
 */
export const INSTANCE_STATES = [
  "created",
  "loading",
  "running",
  "stopped",
  "frozen",
  "exited",
  "rebooting",
  "unknown",
  "offline",
] as const;
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
}

/** The one stop reason the fleet knows: a higher bid took an interruptible instance's GPU. */
export type StopReason = "outbid";

/** Per-call options of an action: the caller's deadline, as a signal (retries stop when it aborts). */
export interface ProviderCall {
  signal?: AbortSignal;
}

export interface FleetProvider {
  readonly kind: "vast" | "simulator";
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
