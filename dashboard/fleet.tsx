/** Fleet page: every instance fleetwarden knows, its state, GPU, price, last seen and recent events. */
import type { InstanceView } from "../fleet/list-instances.ts";
import { Badge, InstanceStateBadge } from "./badges.tsx";
import { dollarsPerHour, relative, utcTime } from "./format.ts";
import { OptionalFact } from "./facts.tsx";

const gpu = (i: InstanceView) => (i.gpuName ? `${i.gpuCount ?? 1}× ${i.gpuName}` : "unknown GPU");

function InstanceCard({ instance: i, now }: { instance: InstanceView; now: number }) {
  return (
    <li class="card" data-instance-id={i.id}>
      <h3>
        {i.label ? `${i.label} (${i.id})` : i.id} <InstanceStateBadge state={i.state} />
        {i.gone ? <Badge tone="neutral">gone</Badge> : null}
        {i.heartbeatMissedAt ? <Badge tone="warn">heartbeat missed</Badge> : null}
      </h3>
      <dl class="facts">
        <dt>GPU</dt>
        <dd>{gpu(i)}</dd>
        <dt>Price</dt>
        <dd>{dollarsPerHour(i.pricePerHour)}</dd>
        <dt>Last seen</dt>
        <dd>{`${utcTime(i.lastSeenAt)} (${relative(i.lastSeenAt, now)})`}</dd>
        <dt>State since</dt>
        <dd>{utcTime(i.stateAt)}</dd>
        <OptionalFact term="Status" value={i.statusMessage} />
      </dl>
      {i.recentEvents.length ? (
        <details>
          <summary>{`Recent events (${i.recentEvents.length})`}</summary>
          <ul>
            {i.recentEvents.map((e) => (
              <li>
                {`${utcTime(e.at)}: ${e.fromState ?? "new"} → ${e.toState} (${e.source})${e.message ? ` — ${e.message}` : ""}`}
              </li>
            ))}
          </ul>
        </details>
      ) : (
        <p class="muted">No state changes recorded.</p>
      )}
    </li>
  );
}

export function FleetPage({ instances, now, provider }: { instances: InstanceView[]; now: number; provider: string }) {
  const live = instances.filter((i) => !i.gone);
  const hourly = live.reduce((sum, i) => sum + (i.state === "running" ? (i.pricePerHour ?? 0) : 0), 0);
  return (
    <>
      <p>
        {`${live.length} instance${live.length === 1 ? "" : "s"} from the ${provider} provider; running ones cost ${dollarsPerHour(hourly)} in total.`}
      </p>
      {instances.length === 0 ? (
        <p>No instances yet. They appear after the first reconciliation with the provider or the first instance webhook.</p>
      ) : (
        <ul class="cards" data-testid="instances">
          {instances.map((i) => (
            <InstanceCard instance={i} now={now} />
          ))}
        </ul>
      )}
    </>
  );
}
