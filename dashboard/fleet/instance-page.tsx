/**
 * One instance's page: its state, then the operator's actions right under it (in a thumb's reach
 * on a phone; behind the approval rules and a confirmation, only those the provider has and only
 * for a role that may act), its facts, a "simulate failure" form on the simulator, the rejection
 * blocks on it (liftable), its state history, the actions taken on it (who decided, outcome,
 * evidence) and the runs that touched it. Updates live.
 */
import { Badge, InstanceStateBadge } from "../shell/badges.tsx";
import { OptionalFact } from "../shell/facts.tsx";
import { FailureForm, gpu } from "./fleet.tsx";
import { InstanceActionsForm, offeredActions } from "./instance-actions.tsx";
import { InstanceBlocks } from "./instance-blocks.tsx";
import type { Viewer } from "../shell/can.ts";
import type { Capability } from "../../fleet/providers/provider.ts";
import { dollarsPerHour, relative, utcTime } from "../shell/format.ts";
import type { InstanceRecord } from "../../jobs/read-models/instance-record.ts";
import { RunsTimeline } from "../runs/runs-timeline.tsx";
import { InstanceEconomics } from "./instance-economics.tsx";

import { ActionDecisions } from "./action-decisions.tsx";
import { ReplacementLineage } from "./replacements.tsx";
import { ReporterRevealForm } from "./instance-reporter.tsx";

export function InstanceDetail(props: {
  record: InstanceRecord;
  now: number;
  csrf: string;
  simulated: boolean;
  approvalRequired: readonly string[];
  viewer: Viewer;
  capabilities: ReadonlySet<Capability>;
}) {
  const { record, now, csrf, viewer } = props;
  const simulated = props.simulated && viewer.can("simulateFailure");
  const { instance: i, history, actions, runs } = record;
  return (
    <>
      <section class="panel" aria-labelledby="instance-facts">
        <h2 id="instance-facts">
          {"State "}
          <InstanceStateBadge state={i.state} />
          {i.gone ? <Badge tone="neutral">gone</Badge> : null}
          {i.heartbeatMissedAt ? <Badge tone="warn">heartbeat missed</Badge> : null}
        </h2>
        {/* The operator's actions first, under the state: on a phone they are in reach of a thumb without scrolling. */}
        {i.gone || !viewer.can("instanceAction") ? null : (
          <InstanceActionsForm
            instance={i}
            csrf={csrf}
            approvalRequired={props.approvalRequired}
            offered={offeredActions(props.capabilities)}
          />
        )}
        <dl class="facts">
          <OptionalFact term="Label" value={i.label} />
          <dt>Since</dt>
          <dd>{`${utcTime(i.stateAt)} (${relative(i.stateAt, now)})`}</dd>
          <dt>Last seen</dt>
          <dd>{`${utcTime(i.lastSeenAt)} (${relative(i.lastSeenAt, now)})`}</dd>
          <dt>GPU</dt>
          <dd>{gpu(i)}</dd>
          <dt>Price</dt>
          <dd>{dollarsPerHour(i.pricePerHour)}</dd>
          <OptionalFact term="Status" value={i.statusMessage} />
        </dl>
        <InstanceEconomics instance={i} utilisation={record.utilisation} stall={record.stall} />
        <ReplacementLineage instance={i} />
        {i.gone || !viewer.can("instanceAction") ? null : <ReporterRevealForm instanceId={i.id} csrf={csrf} />}
        {simulated && !i.gone ? <FailureForm instance={i} csrf={csrf} back={`/fleet/${encodeURIComponent(i.id)}`} /> : null}
      </section>
      <InstanceBlocks blocks={record.blocks} csrf={csrf} canLift={viewer.can("liftBlock")} now={now} />
      <h2>State history</h2>
      {history.length ? (
        <ol class="history">
          {history.map((e) => (
            <li>{`${utcTime(e.at)}: ${e.fromState ?? "new"} → ${e.toState} (${e.source})${e.message ? `: ${e.message}` : ""}`}</li>
          ))}
        </ol>
      ) : (
        <p>No state changes recorded.</p>
      )}
      <h2>Actions on it</h2>
      <ActionDecisions actions={actions} empty="No actions taken on it." />
      <h2>Runs that touched it</h2>
      <RunsTimeline runs={runs} now={now} caption={`Runs that touched ${i.id}`} />
    </>
  );
}
