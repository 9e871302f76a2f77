/**
 * Overview: the agent's state, its context gauge, the operator's buttons, the loop watchdog,
 * the latest runs, pending wakes and recent notifications. The state, runs and wakes regions update live.
 */
import type { NotificationView } from "../notify/list-notifications.ts";
import { ResetForm, RESET_KEEPS, TriggerForm } from "./action-forms.tsx";
import { ContextGauge, StatePanel, type AgentState, type LastCompaction } from "./agent-state-panel.tsx";
import { HealthPanel, type LoopHealth } from "./health-panel.tsx";
import { NotificationsList } from "./notifications.tsx";
import { RunsTimeline, type RunView } from "./runs-timeline.tsx";
import { WakesList, type WakeRow } from "./wakes.tsx";

export interface OverviewData {
  state: AgentState;
  compaction: LastCompaction | null;
  runs: RunView[];
  wakes: WakeRow[];
  notifications: NotificationView[];
  health: LoopHealth;
  now: number;
}

export function OverviewPage({ data, csrf }: { data: OverviewData; csrf: string }) {
  return (
    <>
      <div class="grid">
        <section class="panel" aria-labelledby="state-heading">
          <h2 id="state-heading">Agent</h2>
          <div data-live="state" aria-live="polite">
            <StatePanel state={data.state} />
          </div>
          <div class="actions">
            <TriggerForm csrf={csrf} back="/" />
            <ResetForm csrf={csrf} />
          </div>
          <p class="muted">{RESET_KEEPS}</p>
        </section>
        <section class="panel" aria-labelledby="context-heading">
          <h2 id="context-heading">Context</h2>
          <div data-live="context">
            <ContextGauge state={data.state} compaction={data.compaction} />
          </div>
        </section>
      </div>
      <HealthPanel health={data.health} now={data.now} />
      <section aria-labelledby="runs-heading">
        <h2 id="runs-heading">Latest runs</h2>
        <div data-live="recent-runs">
          <RunsTimeline runs={data.runs} now={data.now} />
        </div>
        <p>
          <a href="/runs">All runs</a>
        </p>
      </section>
      <section aria-labelledby="wakes-heading">
        <h2 id="wakes-heading">Pending wakes</h2>
        <div data-live="pending-wakes">
          <WakesList wakes={data.wakes} now={data.now} empty="No pending wakes: the agent has not scheduled a check." />
        </div>
      </section>
      <section aria-labelledby="notifications-heading">
        <h2 id="notifications-heading">Recent notifications</h2>
        <NotificationsList notifications={data.notifications} now={data.now} />
        <p>
          <a href="/notifications">All notifications</a>
        </p>
      </section>
    </>
  );
}
