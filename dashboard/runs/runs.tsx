/** Runs page: the full timeline, newest first, updating live, with a Trigger now button. */
import { TriggerForm } from "../chat/action-forms.tsx";
import { RunsTimeline, type RunRow } from "./runs-timeline.tsx";
import type { Viewer } from "../shell/can.ts";

export function RunsPage({ runs, now, csrf, viewer }: { runs: RunRow[]; now: number; csrf: string; viewer: Viewer }) {
  return (
    <>
      {viewer.can("trigger") ? (
        <div class="actions">
          <TriggerForm csrf={csrf} back="/runs" />
        </div>
      ) : null}
      <p class="muted">
        Each run consumed the events and wakes listed as its triggers. A run is “no-op” when it consumed no chat message and changed
        nothing; it then costs nothing further and triggers nothing.
      </p>
      <div data-live="runs">
        <RunsTimeline runs={runs} now={now} />
      </div>
    </>
  );
}
