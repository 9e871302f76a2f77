/** Wakes page: the checks the agent promised itself, pending first, then history. */
import type { listWakes } from "../../pipeline/index.ts";
import { WakeStatus } from "../shell/badges.tsx";
import { relative, utcTime } from "../shell/format.ts";

export type WakeRow = Awaited<ReturnType<typeof listWakes>>[number];

const runLink = (runId: number | null, none: string) => (runId === null ? none : <a href={`/runs/${runId}`}>{`run #${runId}`}</a>);

export function WakesList({ wakes, now, empty }: { wakes: WakeRow[]; now: number; empty: string }) {
  if (wakes.length === 0) return <p>{empty}</p>;
  return (
    <ul class="cards">
      {wakes.map((w) => (
        <li class="card" data-wake-id={String(w.id)}>
          <h3>
            {`Wake #${w.id}`} <WakeStatus status={w.status} />
          </h3>
          <p class="said">{w.reason}</p>
          <dl class="facts">
            <dt>Due</dt>
            <dd>{`${utcTime(w.dueAt)} (${relative(w.dueAt, now)})`}</dd>
            <dt>Scheduled by</dt>
            <dd>{runLink(w.createdByRun, "an operator or the system")}</dd>
            <dt>Consumed by</dt>
            <dd>{runLink(w.consumedByRun, w.status === "pending" ? "not yet" : "—")}</dd>
          </dl>
        </li>
      ))}
    </ul>
  );
}

export function WakesPage({ pending, history, now }: { pending: WakeRow[]; history: WakeRow[]; now: number }) {
  return (
    <>
      <h2>Pending</h2>
      <div data-live="pending-wakes">
        <WakesList wakes={pending} now={now} empty="No pending wakes: the agent has not scheduled a check." />
      </div>
      <h2>Consumed and cancelled</h2>
      <WakesList wakes={history} now={now} empty="None yet." />
    </>
  );
}
