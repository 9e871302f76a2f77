/**
 * The overview's spend panel: estimated spend today against the daily limit (a gauge and a
 * sentence), and the last seven days as a column chart with the limit drawn as a line.
 */
import type { Series } from "./charts.tsx";
import { ColumnChart } from "./charts.tsx";
import { percent } from "../shell/format.ts";
import { overBudget, type Spend } from "../../jobs/read-models/spend.ts";
import type { Balance } from "../../jobs/read-models/balance.ts";

export const dollars = (usd: number) => `$${usd.toFixed(2)}`;

const SPEND_SERIES: Series[] = [{ key: "usd", label: "estimated spend (USD)", tone: "fill-info" }];

export function spendSentence(spend: Spend): string {
  if (spend.limit === null) return `Spent ${dollars(spend.today)} today (UTC); no daily limit is set.`;
  const share = percent(spend.today, spend.limit);
  return `Spent ${dollars(spend.today)} of the ${dollars(spend.limit)} daily limit today (UTC), ${share} %${overBudget(spend) ? ": over budget" : ""}.`;
}

export function SpendPanel({ spend, balance = null }: { spend: Spend; balance?: Balance | null }) {
  const week = spend.days.reduce((sum, d) => sum + d.usd, 0);
  return (
    <div class="spend" data-testid="spend">
      <p data-testid="spend-today">{spendSentence(spend)}</p>
      {balance ? (
        <p data-testid="spend-balance">{`Provider balance ${dollars(balance.usd)}${balance.hoursLeft === null ? "" : `, about ${balance.hoursLeft} h at the current burn`} (read ${balance.at.slice(11, 16)} UTC).`}</p>
      ) : null}
      {spend.limit !== null ? (
        <>
          <label for="spend-gauge">Spend today against the limit</label>
          <meter id="spend-gauge" min={0} max={spend.limit} high={spend.limit * 0.8} optimum={0} value={Math.min(spend.today, spend.limit)}>
            {`${dollars(spend.today)} of ${dollars(spend.limit)}`}
          </meter>
        </>
      ) : null}
      <ColumnChart
        id="spend-chart"
        title="Estimated spend per day, last 7 days (UTC)"
        summary={`${dollars(week)} in the last 7 days; the most in one day ${dollars(Math.max(...spend.days.map((d) => d.usd)))}.`}
        buckets={spend.days.map((d) => ({ label: d.day.slice(5), values: { usd: Math.round(d.usd * 100) / 100 } }))}
        series={SPEND_SERIES}
        firstColumn="Day (UTC)"
        {...(spend.limit !== null ? { line: { value: spend.limit, label: `the daily limit, ${dollars(spend.limit)}` } } : {})}
      />
    </div>
  );
}
