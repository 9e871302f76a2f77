/**
 * The loop watchdog's panel on the overview: "Loop healthy", or each open condition with when it
 * started and its detail (the same data as GET /api/agents/:agent/health). A component of its
 * own so the overview can be rearranged around it.
 */
import type { HealthCondition } from "../../agent/watchdog/watchdog.ts";
import { relative, utcTime } from "../shell/format.ts";

export interface LoopHealth {
  ok: boolean;
  conditions: HealthCondition[];
}

export function HealthPanel({ health, now }: { health: LoopHealth; now: number }) {
  return (
    <section class="panel" aria-labelledby="health-heading" data-health={health.ok ? "ok" : "conditions"}>
      <h2 id="health-heading">
        {"Loop watchdog "}
        {health.ok ? <span class="badge ok">healthy</span> : <span class="badge bad">{`${health.conditions.length} condition(s)`}</span>}
      </h2>
      {health.ok ? (
        <p class="muted">No stuck events, failing runs, poison, budget failures, open breaker, storms or exhausted wake budget.</p>
      ) : (
        <ul>
          {health.conditions.map((c) => {
            const since = Date.parse(c.since);
            return (
              <li data-condition={c.kind}>
                <strong>{c.kind}</strong>
                {` since ${utcTime(since)} (${relative(since, now)}): ${c.detail}`}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
