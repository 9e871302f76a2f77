/**
 * The simulator's scripted failures and what each does to an instance. Its own module because the
 * simulated provider (simulator.ts) and the logs it shows (simulator-logs.ts) both read it.
 */
import type { InstanceState } from "./provider.ts";

export const FAILURE_KINDS = ["exit", "oom", "stuck_loading", "host_offline"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What each scripted failure does to the instance, as a real one would show it. */
export const FAILURES: Record<FailureKind, { state: InstanceState; message: string }> = {
  exit: { state: "exited", message: "container exited with code 1" },
  oom: { state: "exited", message: "CUDA out of memory: tried to allocate 2.50 GiB" },
  stuck_loading: { state: "loading", message: "loading: pulling image (no progress)" },
  host_offline: { state: "offline", message: "host offline: machine disconnected" },
};
