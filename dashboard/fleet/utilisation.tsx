/**
 * GPU utilisation on the dashboard: the fleet table's cell (latest figure, marked idle or stale)
 * and the instance page's sparkline of the last 24 hours of samples (instance_telemetry), with
 * its text alternative (a sentence naming the range and the latest figure). The samples are read
 * by jobs/read-models/instance-utilisation.ts.
 */
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import type { IdleSettings } from "../../fleet/economics/idle.ts";
import { idleFor } from "../../jobs/read-models/attention-economics.ts";
import type { UtilisationPoint } from "../../jobs/read-models/instance-utilisation.ts";
import { Badge } from "../shell/badges.tsx";

/** The fleet table's utilisation cell. */
export function UtilisationCell({ instance: i, now, economics }: { instance: InstanceView; now: number; economics: IdleSettings }) {
  if (i.gpuUtil === null || i.gpuUtilAt === null) return <td>—</td>;
  const stale = now - Date.parse(i.gpuUtilAt) > economics.telemetryStaleMs;
  return (
    <td data-gpu-util={String(i.gpuUtil)}>
      {`${i.gpuUtil} %`}
      {idleFor(i, now, economics) !== null ? <Badge tone="warn">idle</Badge> : null}
      {stale ? <Badge tone="neutral">stale</Badge> : null}
    </td>
  );
}

const W = 320;
const H = 48;

export function UtilisationSparkline({ points }: { points: UtilisationPoint[] }) {
  if (points.length === 0) return <p data-testid="utilisation-sparkline">No GPU utilisation reported in the last 24 hours.</p>;
  const first = points[0]!.at;
  const span = Math.max(1, points[points.length - 1]!.at - first);
  const xy = points.map((p) => `${(((p.at - first) / span) * W).toFixed(1)},${(H - (p.gpuUtil / 100) * H).toFixed(1)}`);
  const values = points.map((p) => p.gpuUtil);
  const latest = values[values.length - 1]!;
  const summary = `GPU utilisation, last 24 hours: ${points.length} sample${points.length === 1 ? "" : "s"}, from ${Math.min(...values)} % to ${Math.max(...values)} %, latest ${latest} %.`;
  return (
    <figure class="sparkline" data-testid="utilisation-sparkline">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} preserveAspectRatio="none" class="spark-svg">
        <polyline fill="none" stroke="currentColor" stroke-width="2" points={xy.join(" ")} />
      </svg>
      <figcaption>{summary}</figcaption>
    </figure>
  );
}
