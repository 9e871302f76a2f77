/**
 * The overview's first region: what needs attention, each item a link to where it is handled.
 * Pending approvals, instances not running as intended, the LLM's state, and last the loop
 * watchdog's open conditions (the same data as GET /api/agents/:agent/health, in its own panel).
 */
import type { Attention } from "../../jobs/read-models/attention.ts";
import { Badge, InstanceStateBadge } from "../shell/badges.tsx";
import { utcTime } from "../shell/format.ts";
import { HealthPanel } from "./health-panel.tsx";
import { overBudgetLine } from "../../jobs/read-models/attention-economics.ts";

function LlmLine({ llm }: { llm: Attention["llm"] }) {
  if (!llm.configured) return <li>{"LLM: not configured; the rules policy decides every run."}</li>;
  if (llm.breakerOpenUntil !== null)
    return (
      <li>
        <Badge tone="bad">LLM breaker open</Badge>
        {` The LLM failed repeatedly; runs fall back to the rules policy until ${utcTime(llm.breakerOpenUntil)}.`}
      </li>
    );
  if (llm.fallingBack)
    return (
      <li>
        <Badge tone="warn">falling back to rules</Badge>
        {" The latest run was decided by the rules policy although an LLM is configured (see the run’s note)."}
      </li>
    );
  return <li>{"LLM: configured and answering."}</li>;
}

export function AttentionStrip({ attention }: { attention: Attention }) {
  const { approvals, instances, llm, count } = attention;
  return (
    <div class={`attention ${count > 0 ? "needs" : "clear"}`} data-testid="attention" data-count={String(count)}>
      <p class="attention-head">
        {count === 0 ? <Badge tone="ok">all clear</Badge> : <Badge tone="bad">{`${count} need${count === 1 ? "s" : ""} attention`}</Badge>}
      </p>
      <ul class="attention-list">
        {approvals.length ? (
          <li data-testid="attention-approvals">
            <a href="/approvals">{`${approvals.length} approval${approvals.length === 1 ? "" : "s"} waiting`}</a>
            {": "}
            {approvals.map((a, i) => (
              <>
                {i > 0 ? ", " : ""}
                <a href={`/approvals#approval-${a.id}`}>{`${a.kind} ${a.instanceId ?? ""}`.trim()}</a>
              </>
            ))}
          </li>
        ) : (
          <li>No approvals waiting.</li>
        )}
        {instances.length ? (
          instances.map((i) => (
            <li data-testid="attention-instance" data-instance-id={i.id}>
              <a href={`/fleet/${encodeURIComponent(i.id)}`}>{i.label ? `${i.label} (${i.id})` : i.id}</a>{" "}
              <InstanceStateBadge state={i.state} />
              {` ${i.reasons.join("; ")}`}
            </li>
          ))
        ) : (
          <li>Every instance is running as intended.</li>
        )}
        {attention.overBudget ? (
          <li data-testid="attention-over-budget">
            <Badge tone="bad">over budget</Badge> {overBudgetLine(attention.overBudget)}
          </li>
        ) : null}
        <LlmLine llm={llm} />
      </ul>
      <HealthPanel health={attention.watchdog} now={attention.checkedAt} />
    </div>
  );
}
