/**
 * Whether a listed instance is stalled (fleet/instances/stall.ts decides, the one home of the rule the
 * stall check acts on), read from the instance view the dashboard lists: the attention strip's
 * reason and the instance page's fact.
 */
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import { stallState, type StallSettings, type StallState } from "../../fleet/instances/stall.ts";

const ms = (at: string | null) => (at === null ? null : Date.parse(at));

export function stallOfView(i: InstanceView, now: number, settings: StallSettings): StallState {
  return stallState(
    {
      state: i.gone ? "gone" : i.state,
      progress: i.progress,
      progressAt: ms(i.progressAt),
      progressMovedAt: ms(i.progressMovedAt),
      gpuUtil: i.gpuUtil,
      gpuUtilAt: ms(i.gpuUtilAt),
    },
    now,
    settings,
  );
}

/** The attention strip's reason: `stalled: GPU 97 %, progress 1200 unchanged for 31 min`. */
export function stallReasons(i: InstanceView, now: number, settings: StallSettings): string[] {
  const stall = stallOfView(i, now, settings);
  return stall.stalled ? [`stalled: ${stall.signal}`] : [];
}
