/**
 * Whether an instance is idle, and the signal that decided it (issue 21, part 2). Idle means GPU
 * utilisation has stayed below IDLE_GPU_UTIL_PCT since `instances.idleSince` (kept by
 * fleet/instances/telemetry.ts at each sample) on telemetry fresher than TELEMETRY_STALE_S. It fails safe:
 * utilisation never reported, or older than the staleness limit, is *not idle*, and says so, so
 * a silent sensor can never stop a working instance. Every rule that acts on idleness (the
 * economics tick check, the LLM's tools, the snapshot) reads it here.
 */
import type { Config } from "../../runtime/config.ts";
import { MINUTE_MS } from "../../runtime/time.ts";

export interface IdleState {
  idle: boolean;
  /** How long it has been idle (0 when not idle). */
  forMs: number;
  /** The signal that decided it, for humans and the model ("gpu_util 0 % for 31 min, from Vast.ai"). */
  signal: string;
}

/** The settings the decision reads. */
export type IdleSettings = Pick<Config["economics"], "idleGpuUtilPct" | "telemetryStaleMs">;

/** The instance columns the decision reads. */
export interface IdleInputs {
  state: string;
  gpuUtil: number | null;
  gpuUtilAt: number | null;
  idleSince: number | null;
  telemetrySource: string | null;
}

const SOURCES: Record<string, string> = { vast: "Vast.ai", webhook: "the instance's webhook", simulator: "the simulator" };

function sourceName(source: string | null): string {
  return source ? (SOURCES[source] ?? source) : "an unknown source";
}

function minutes(ms: number): string {
  return `${Math.floor(ms / MINUTE_MS)} min`;
}

/** Only a running instance can be idle: a stopped one costs storage, not GPU time. */
export function idleState(row: IdleInputs, now: number, economics: IdleSettings): IdleState {
  const from = sourceName(row.telemetrySource);
  if (row.state !== "running") return { idle: false, forMs: 0, signal: `not running (${row.state})` };
  if (row.gpuUtil === null || row.gpuUtilAt === null) return { idle: false, forMs: 0, signal: "gpu_util never reported: not judged idle" };
  const age = now - row.gpuUtilAt;
  if (age > economics.telemetryStaleMs) {
    return { idle: false, forMs: 0, signal: `gpu_util ${row.gpuUtil} % is stale (${minutes(age)} old, from ${from}): not judged idle` };
  }
  if (row.gpuUtil >= economics.idleGpuUtilPct || row.idleSince === null) {
    return { idle: false, forMs: 0, signal: `gpu_util ${row.gpuUtil} %, from ${from}: working` };
  }
  const forMs = Math.max(0, now - row.idleSince);
  return { idle: true, forMs, signal: `gpu_util ${row.gpuUtil} % for ${minutes(forMs)}, from ${from}` };
}
