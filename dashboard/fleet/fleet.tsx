/**
 * Fleet page: the fleet by state as one stacked bar with its hourly cost, then a compact table
 * of every instance (sortable by column, filterable by state, with its GPU utilisation) that updates live. On the
 * simulator each row has a "simulate failure" form posted like every other dashboard form.
 */
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import { INSTANCE_STATES } from "../../fleet/providers/provider.ts";
import type { IdleSettings } from "../../fleet/economics/idle.ts";
import { FAILURE_KINDS } from "../../fleet/providers/simulator.ts";
import { Badge, InstanceStateBadge } from "../shell/badges.tsx";
import { StackedBar } from "../overview/charts.tsx";
import { fleetHref, type FleetQuery, type SortColumn } from "./fleet-query.ts";
import { dollarsPerHour, relative, utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";
import { UtilisationCell } from "./utilisation.tsx";

export const gpu = (i: InstanceView) => (i.gpuName ? `${i.gpuCount ?? 1}× ${i.gpuName}` : "unknown GPU");

const STATE_TONES: Record<string, string> = {
  running: "fill-ok",
  created: "fill-info",
  loading: "fill-info",
  rebooting: "fill-info",
  stopped: "fill-neutral",
  frozen: "fill-warn",
  unknown: "fill-warn",
  exited: "fill-bad",
  offline: "fill-bad",
};

const FAILURE_LABELS: Record<string, string> = {
  exit: "exit (code 1)",
  oom: "out of memory",
  stuck_loading: "stuck loading",
  host_offline: "host offline",
  idle: "GPU idle (0 %)",
  busy: "back to work",
  outbid: "outbid (stopped)",
};

/**
 * What the fleet costs per hour now, each instance at fleet/economics/instance-cost.ts's `costPerHour` (the
 * listing's `costPerHour`): its price while it holds a GPU, its storage while stopped, nothing
 * once gone. `storage` is the stopped ones' share; `unpriced` counts instances the provider never
 * priced (left out of the sum).
 */
export function hourlyCost(instances: InstanceView[]): { total: number; storage: number; unpriced: number } {
  const live = instances.filter((i) => !i.gone);
  const sum = (rows: InstanceView[]) => rows.reduce((n, i) => n + (i.costPerHour ?? 0), 0);
  return {
    total: sum(live),
    storage: sum(live.filter((i) => i.state === "stopped")),
    unpriced: live.filter((i) => i.costPerHour === null).length,
  };
}

/** The summary's cost clause, saying what it counts. */
export function costSentence(instances: InstanceView[]): string {
  const cost = hourlyCost(instances);
  const unpriced = cost.unpriced ? `; ${cost.unpriced} without a known price left out` : "";
  return `the fleet costs ${dollarsPerHour(cost.total)} now, the storage of stopped instances (${dollarsPerHour(cost.storage)}) included${unpriced}`;
}

export function FleetSummary({ instances }: { instances: InstanceView[] }) {
  const live = instances.filter((i) => !i.gone);
  const counts = INSTANCE_STATES.map((state) => ({
    label: state,
    value: live.filter((i) => i.state === state).length,
    tone: STATE_TONES[state] ?? "fill-neutral",
  }));
  const summary = live.length
    ? `${live.length} instance${live.length === 1 ? "" : "s"}: ${counts
        .filter((c) => c.value > 0)
        .map((c) => `${c.value} ${c.label}`)
        .join(", ")}; ${costSentence(instances)}.`
    : "No instances yet.";
  return <StackedBar id="fleet-states" title="Instances by state" summary={summary} segments={counts} />;
}

export function FailureForm({ instance, csrf, back }: { instance: InstanceView; csrf: string; back: string }) {
  const id = `fail-${instance.id}`;
  return (
    <form method="post" action={`/fleet/${encodeURIComponent(instance.id)}/fail`} class="inline-form">
      <CsrfField token={csrf} />
      <input type="hidden" name="back" value={back} />
      <label class="visually-hidden" for={id}>{`Failure to simulate on ${instance.id}`}</label>
      <select id={id} name="kind">
        {FAILURE_KINDS.map((kind) => (
          <option value={kind}>{FAILURE_LABELS[kind] ?? kind}</option>
        ))}
      </select>
      <button type="submit" class="secondary small">
        Simulate failure
      </button>
    </form>
  );
}

const lastEvent = (i: InstanceView) => {
  const e = i.recentEvents[0];
  return e ? `${e.fromState ?? "new"} → ${e.toState} (${e.source})${e.message ? `: ${e.message}` : ""}` : "—";
};

const COLUMN_LABELS: Record<SortColumn, string> = { id: "Instance", state: "State", since: "Since", lastSeen: "Last seen", price: "$/h" };

function SortHeader({ column, query }: { column: SortColumn; query: FleetQuery }) {
  const active = query.sort === column;
  const next = active && query.dir === "asc" ? "desc" : "asc";
  return (
    <th scope="col" aria-sort={active ? (query.dir === "asc" ? "ascending" : "descending") : undefined}>
      <a href={fleetHref({ ...query, sort: column, dir: next })}>
        {COLUMN_LABELS[column]}
        <span class="visually-hidden">{active ? `, sorted ${query.dir === "asc" ? "ascending" : "descending"}` : ", sort"}</span>
        {active ? (query.dir === "asc" ? " ▲" : " ▼") : ""}
      </a>
    </th>
  );
}

export function FleetTable(props: {
  instances: InstanceView[];
  query: FleetQuery;
  now: number;
  csrf: string;
  simulated: boolean;
  back: string;
  economics: IdleSettings;
}) {
  const { instances, query, now } = props;
  if (instances.length === 0)
    return (
      <p>
        {query.state
          ? `No instance is ${query.state}.`
          : "No instances yet. They appear after the first reconciliation with the provider or the first instance webhook."}
      </p>
    );
  return (
    <div class="table-wrap" tabindex={0} role="region" aria-label="Instances">
      <table class="fleet stack" data-testid="instances">
        <thead>
          <tr>
            <SortHeader column="id" query={query} />
            <th scope="col">Label</th>
            <SortHeader column="state" query={query} />
            <SortHeader column="since" query={query} />
            <SortHeader column="lastSeen" query={query} />
            <th scope="col">GPU</th>
            <SortHeader column="price" query={query} />
            <th scope="col">GPU util.</th>
            <th scope="col">Last event</th>
            {props.simulated ? <th scope="col">Simulate</th> : null}
          </tr>
        </thead>
        <tbody>
          {instances.map((i) => (
            <tr data-instance-id={i.id} data-state={i.state}>
              <th scope="row">
                <a href={`/fleet/${encodeURIComponent(i.id)}`}>{i.id}</a>
              </th>
              <td>{i.label ?? "—"}</td>
              <td>
                <InstanceStateBadge state={i.state} />
                {i.gone ? <Badge tone="neutral">gone</Badge> : null}
                {i.webhookOnly ? <Badge tone="neutral">webhook only</Badge> : null}
                {i.heartbeatMissedAt ? <Badge tone="warn">heartbeat missed</Badge> : null}
              </td>
              <td title={utcTime(i.stateAt)}>{relative(i.stateAt, now)}</td>
              <td title={utcTime(i.lastSeenAt)}>{relative(i.lastSeenAt, now)}</td>
              <td>{gpu(i)}</td>
              <td>{i.gone ? "—" : dollarsPerHour(i.pricePerHour)}</td>
              <UtilisationCell instance={i} now={now} economics={props.economics} />
              <td class="last-event">{lastEvent(i)}</td>
              {props.simulated ? <td>{i.gone ? "—" : <FailureForm instance={i} csrf={props.csrf} back={props.back} />}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function StateFilter({ query }: { query: FleetQuery }) {
  return (
    <form method="get" action="/fleet" class="inline-form">
      {query.sort !== "id" ? <input type="hidden" name="sort" value={query.sort} /> : null}
      {query.dir !== "asc" ? <input type="hidden" name="dir" value={query.dir} /> : null}
      <label for="state-filter">Show state</label>
      <select id="state-filter" name="state">
        <option value="" selected={query.state === ""}>
          all states
        </option>
        {INSTANCE_STATES.map((s) => (
          <option value={s} selected={query.state === s}>
            {s}
          </option>
        ))}
      </select>
      <button type="submit" class="secondary small">
        Filter
      </button>
    </form>
  );
}

/** `canFail`: the viewer may simulate failures (the column shows only then, on the simulator). */
export function FleetPage(props: {
  all: InstanceView[];
  shown: InstanceView[];
  query: FleetQuery;
  now: number;
  provider: string;
  csrf: string;
  economics: IdleSettings;
  canFail: boolean;
}) {
  const simulated = props.provider === "simulator" && props.canFail;
  const back = fleetHref(props.query);
  return (
    <>
      <p class="muted">{`Instances from the ${props.provider} provider, as fleetwarden last saw them. Select a column heading to sort by it.`}</p>
      <div data-live="fleet-summary">
        <FleetSummary instances={props.all} />
      </div>
      <StateFilter query={props.query} />
      <div data-live="fleet-table">
        <FleetTable
          instances={props.shown}
          query={props.query}
          now={props.now}
          csrf={props.csrf}
          simulated={simulated}
          back={back}
          economics={props.economics}
        />
      </div>
    </>
  );
}
