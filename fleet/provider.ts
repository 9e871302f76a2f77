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
}

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
