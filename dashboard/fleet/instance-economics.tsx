/**
 * The instance page's economics: what it costs per hour now (its storage while stopped), its
 * latest GPU utilisation and since when it has been idle, its progress counter and whether it is
 * stalled (fleet/instances/stall.ts), and the last 24 hours as a sparkline.
 */
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import { OptionalFact } from "../shell/facts.tsx";
import { dollarsPerHour, utcTime } from "../shell/format.ts";
import { UtilisationSparkline } from "./utilisation.tsx";
import type { UtilisationPoint } from "../../jobs/read-models/instance-utilisation.ts";
import type { StallState } from "../../fleet/instances/stall.ts";

export function InstanceEconomics({
  instance: i,
  utilisation,
  stall,
}: {
  instance: InstanceView;
  utilisation: UtilisationPoint[];
  stall?: StallState;
}) {
  return (
    <>
      <dl class="facts" data-testid="instance-economics">
        <dt>Costs now</dt>
        <dd>{i.state === "stopped" ? `${dollarsPerHour(i.costPerHour)} (storage, while stopped)` : dollarsPerHour(i.costPerHour)}</dd>
        <OptionalFact term="GPU utilisation" value={i.gpuUtil !== null ? `${i.gpuUtil} % at ${utcTime(i.gpuUtilAt)}` : null} />
        <OptionalFact term="Idle since" value={i.idleSince ? utcTime(i.idleSince) : null} />
        <OptionalFact
          term="Progress"
          value={i.progress !== null ? `${i.progress} at ${utcTime(i.progressAt)} (last moved ${utcTime(i.progressMovedAt)})` : null}
        />
        <OptionalFact term="Stalled" value={stall?.stalled ? stall.signal : null} />
        <OptionalFact term="Rental ends" value={i.endsAt ? utcTime(i.endsAt) : null} />
        <OptionalFact term="Interruptible" value={i.interruptible ? "yes (a higher bid can stop it)" : null} />
      </dl>
      <UtilisationSparkline points={utilisation} />
    </>
  );
}
