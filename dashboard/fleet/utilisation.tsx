/**
 * GPU utilisation on the dashboard: the fleet table's cell (latest figure, marked idle or stale)
 * and the instance page's sparkline of the last 24 hours of samples (instance_telemetry), with
 * its text alternative (a sentence naming the range and the latest figure).
 */
import { and, asc, eq, gte, isNotNull } from "drizzle-orm";
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import type { Deps } from "../../jobs/deps.ts";
import { DAY_MS } from "../../runtime/time.ts";
import { instanceTelemetry } from "../../schema/index.ts";
import { idleFor } from "../overview/attention-economics.ts";
import type { IdleSettings } from "../../fleet/economics/idle.ts";
import { Badge } from "../shell/badges.tsx";

/** Samples drawn at most (a day of one-minute samples, thinned to every n-th). */
export const SPARK_POINTS = 288;

export interface UtilisationPoint {
  at: number;
  gpuUtil: number;
}

export async function loadUtilisation(deps: Pick<Deps, "db" | "clock">, agentId: string, instanceId: string): Promise<UtilisationPoint[]> {
  const rows = await deps.db
    .select({ at: instanceTelemetry.at, gpuUtil: instanceTelemetry.gpuUtil })
    .from(instanceTelemetry)
    .where(
      and(
        eq(instanceTelemetry.agentId, agentId),
        eq(instanceTelemetry.instanceId, instanceId),
        gte(instanceTelemetry.at, deps.clock.now() - DAY_MS),
        isNotNull(instanceTelemetry.gpuUtil),
      ),
    )
    .orderBy(asc(instanceTelemetry.at));
  const every = Math.max(1, Math.ceil(rows.length / SPARK_POINTS));
  return rows.filter((_, i) => i % every === 0 || i === rows.length - 1).map((r) => ({ at: r.at, gpuUtil: r.gpuUtil! }));
}

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
