/**
 * Overview, attention first: what needs a person (approvals, instances, the LLM, the loop watchdog), then what a new
 * install still has to do (first-steps.tsx, gone once done), then the fleet
 * by state with its cost and the agent's state, spend today against the limit with the last 7 days, the charts, the context gauge, the latest runs,
 * pending wakes and recent notifications. Every region updates live.
 */
import { ResetForm, RESET_KEEPS, TriggerForm } from "../chat/action-forms.tsx";
import { ContextGauge, StatePanel } from "./agent-state-panel.tsx";
import type { OverviewData } from "../../jobs/read-models/overview.ts";
import { AttentionStrip } from "./attention-strip.tsx";
import { FleetSummary } from "../fleet/fleet.tsx";
import { NotificationsList } from "../approvals/notifications.tsx";
import { OverviewCharts } from "./overview-charts.tsx";
import { RunsTimeline } from "../runs/runs-timeline.tsx";
import { WakesList } from "../runs/wakes.tsx";
import { SpendPanel } from "./spend-panel.tsx";
import { ModeSwitch, type ActionView } from "../fleet/action-decisions.tsx";
import { MemoryPanel } from "../chat/memory-panel.tsx";
import type { Viewer } from "../shell/can.ts";
import { BreakerLift } from "./breaker-lift.tsx";
import { FirstStepsBox } from "./first-steps.tsx";

export function OverviewPage({
  data,
  csrf,
  mode,
  viewer,
}: {
  data: OverviewData;
  csrf: string;
  mode?: { mode: "act" | "shadow"; proposals: ActionView[] };
  viewer: Viewer;
}) {
  return (
    <>
      <section aria-labelledby="attention-heading">
        <h2 id="attention-heading" class="visually-hidden">
          Needs attention
        </h2>
        <div data-live="attention">
          <AttentionStrip attention={data.attention} />
        </div>
        {viewer.can("liftBreaker") ? <BreakerLift conditions={data.attention.watchdog.conditions} csrf={csrf} /> : null}
      </section>
      <FirstStepsBox steps={data.firstSteps} />
      <div class="grid">
        <section class="panel" aria-labelledby="fleet-heading">
          <h2 id="fleet-heading">Fleet</h2>
          <div data-live="fleet-summary">
            <FleetSummary instances={data.instances} />
          </div>
          <p>
            <a href="/fleet">Fleet table</a>
          </p>
        </section>
        <section class="panel" aria-labelledby="state-heading">
          <h2 id="state-heading">Agent</h2>
          <div data-live="state" aria-live="polite">
            <StatePanel state={data.state} />
          </div>
          {viewer.can("trigger") ? (
            <div class="actions">
              <TriggerForm csrf={csrf} back="/" />
              <ResetForm csrf={csrf} />
            </div>
          ) : null}
          <details>
            <summary>What does reset keep?</summary>
            <p class="muted">{RESET_KEEPS}</p>
          </details>
          {mode && viewer.can("mode") ? <ModeSwitch mode={mode.mode} proposals={mode.proposals} csrf={csrf} /> : null}
        </section>
      </div>
      <section class="panel" aria-labelledby="spend-heading">
        <h2 id="spend-heading">Spend</h2>
        <div data-live="spend">
          <SpendPanel spend={data.spend} balance={data.balance} />
        </div>
      </section>
      <section aria-labelledby="charts-heading">
        <h2 id="charts-heading">Activity</h2>
        <div data-live="charts">
          <OverviewCharts data={data.charts} />
        </div>
      </section>
      <section class="panel" aria-labelledby="context-heading">
        <h2 id="context-heading">Context</h2>
        <div data-live="context">
          <ContextGauge state={data.state} compaction={data.compaction} />
        </div>
      </section>
      <section aria-labelledby="runs-heading">
        <h2 id="runs-heading">Latest runs</h2>
        <div data-live="recent-runs">
          <RunsTimeline runs={data.runs} now={data.now} caption="Latest runs" />
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
      <section aria-labelledby="memory-heading">
        <h2 id="memory-heading">Pinned memory</h2>
        <MemoryPanel facts={data.memory} csrf={csrf} canDelete={viewer.can("deleteMemory")} />
      </section>
      <section aria-labelledby="notifications-heading">
        <h2 id="notifications-heading">Recent notifications</h2>
        <div data-live="recent-notifications">
          <NotificationsList notifications={data.notifications} now={data.now} />
        </div>
        <p>
          <a href="/notifications">All notifications</a>
        </p>
      </section>
    </>
  );
}
