/**
 * Whether a running instance is stalled, and the signal that decided it (issue 34, item 3): its
 * own progress counter (the instance webhook's `progress`, kept by fleet/instances/telemetry.ts)
 * has not moved for STALL_AFTER_S. GPU utilisation says which kind: busy with no progress is a
 * hang (a collective that never returns keeps the GPU at 100 %), idle with no progress is a
 * starved or finished loop. It fails safe like idleness: an instance that never reported progress
 * is never stalled, and a progress reading older than TELEMETRY_STALE_S proves nothing (a silent
 * reporter is the heartbeat check's business). Every reader (the stall tick check, the snapshot,
 * `get_instance`, the dashboard) asks here.
 */
import type { Config } from "../../runtime/config.ts";
import { MINUTE_MS } from "../../runtime/time.ts";

export type StallKind = "hang" | "idle" | "no GPU reading";

export interface StallState {
  stalled: boolean;
  /** How long the counter has not moved (0 when not stalled). */
  forMs: number;
  kind: StallKind | null;
  /** The signal, for humans and the model: "GPU 97 %, progress 1200 unchanged for 31 min". */
  signal: string;
}

/** The settings the decision reads. */
export interface StallSettings {
  afterMs: number;
  idleGpuUtilPct: Config["economics"]["idleGpuUtilPct"];
  telemetryStaleMs: Config["economics"]["telemetryStaleMs"];
}

/** The instance columns the decision reads. */
export interface StallInputs {
  state: string;
  progress: number | null;
  progressAt: number | null;
  progressMovedAt: number | null;
  gpuUtil: number | null;
  gpuUtilAt: number | null;
}

/** The agent's stall settings out of its Config. */
export function stallSettings(config: Pick<Config, "stall" | "economics">): StallSettings {
  return {
    afterMs: config.stall.afterMs,
    idleGpuUtilPct: config.economics.idleGpuUtilPct,
    telemetryStaleMs: config.economics.telemetryStaleMs,
  };
}

const minutes = (ms: number) => `${Math.floor(ms / MINUTE_MS)} min`;
const NOT: Omit<StallState, "signal"> = { stalled: false, forMs: 0, kind: null };

export function stallState(row: StallInputs, now: number, settings: StallSettings): StallState {
  // `== null`: a row read without these columns (undefined) never reported progress either.
  if (row.progress == null || row.progressAt == null || row.progressMovedAt == null) {
    return { ...NOT, signal: "progress never reported: not judged stalled" };
  }
  if (row.state !== "running") return { ...NOT, signal: `not running (${row.state})` };
  const age = now - row.progressAt;
  if (age > settings.telemetryStaleMs) {
    return { ...NOT, signal: `progress ${row.progress} is stale (${minutes(age)} old): not judged stalled` };
  }
  const forMs = Math.max(0, now - row.progressMovedAt);
  if (forMs < settings.afterMs) return { ...NOT, signal: `progress ${row.progress}, last moved ${minutes(forMs)} ago` };
  const unchanged = `progress ${row.progress} unchanged for ${minutes(forMs)}`;
  const gpuFresh = row.gpuUtil != null && row.gpuUtilAt != null && now - row.gpuUtilAt <= settings.telemetryStaleMs;
  if (!gpuFresh) return { stalled: true, forMs, kind: "no GPU reading", signal: `no fresh GPU reading, ${unchanged}` };
  const kind: StallKind = row.gpuUtil! >= settings.idleGpuUtilPct ? "hang" : "idle";
  return { stalled: true, forMs, kind, signal: `GPU ${row.gpuUtil} %, ${unchanged}` };
}
