/**
 * The simulator's scripted failures and what each does to an instance. Its own module because the
 * simulated provider (simulator.ts) and the logs it shows (simulator-logs.ts) both read it.
 * Random rolls pick only the breakdowns (ROLLED_FAILURE_KINDS); the economics kinds are injected
 * on demand: `idle` (running at 0 % from now on), `busy` (back to work, which clears any scripted
 * failure) and `outbid` (an interruptible rental stopped by a higher bid).
 */
import type { InstanceState } from "./provider.ts";

export const ROLLED_FAILURE_KINDS = ["exit", "oom", "stuck_loading", "host_offline"] as const;
export const FAILURE_KINDS = [...ROLLED_FAILURE_KINDS, "idle", "busy", "outbid", "gpu_gone"] as const;

/** What a start answers when the host no longer has the GPU (the scripted `gpu_gone`); a replacement's cue. */
export const HOST_NO_GPU_MESSAGE = "start failed: the host no longer has the requested GPU";
export type FailureKind = (typeof FAILURE_KINDS)[number];

/**
 * What each scripted failure does to the instance, as a real one would show it. `clears`: the
 * kind ends the scripted failure instead of marking one (the instance is healthy again).
 */
export const FAILURES: Record<FailureKind, { state: InstanceState; message: string; clears?: true }> = {
  exit: { state: "exited", message: "container exited with code 1" },
  oom: { state: "exited", message: "CUDA out of memory: tried to allocate 2.50 GiB" },
  stuck_loading: { state: "loading", message: "loading: pulling image (no progress)" },
  host_offline: { state: "offline", message: "host offline: machine disconnected" },
  idle: { state: "running", message: "running: GPU idle, waiting for work" },
  busy: { state: "running", message: "running", clears: true },
  outbid: { state: "stopped", message: "stopped: outbid by a higher bid" },
  gpu_gone: { state: "exited", message: "container exited: no CUDA device (the host lost the GPU)" },
};
