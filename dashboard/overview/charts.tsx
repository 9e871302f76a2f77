/**
 * The dashboard's charts: plain server-rendered SVG, no client code, so they are re-rendered by
 * the same live updates as the rest of a page. Every chart carries its text alternative: the SVG
 * is an image named by a one-sentence summary, and the numbers it draws are a table beside it.
 * Colour never carries meaning alone: each series is also named in the legend and the table.
 * With too little to draw (nothing at all, or fewer than MIN_BUCKETS columns, which would be drawn
 * as wide blocks) a chart says "Not enough data yet" instead of an empty or solid box.
 */
import type { Child } from "hono/jsx";
import type { Bucket, Series } from "../../jobs/read-models/charts.ts";

export type { Bucket, Series };

const WIDTH = 640;
const HEIGHT = 160;
const PAD = { top: 10, right: 8, bottom: 22, left: 40 };

/** Fewer columns than this are not drawn: one or two would fill the plot as solid blocks. */
export const MIN_BUCKETS = 3;
/** A column is never wider than it would be among this many (a few columns stay columns). */
const MAX_BAR_SHARE = 12;

/** What a chart shows instead of an empty or solid box. */
export function NotEnoughData({ id }: { id: string }) {
  return (
    <p class="chart-empty muted" data-testid={`${id}-empty`}>
      Not enough data yet: the chart is drawn once there is more to show.
    </p>
  );
}

const total = (b: Bucket) => Object.values(b.values).reduce((a, n) => a + n, 0);

/** A rounded-up axis maximum (1, 2, 5 × 10ⁿ), so gridline labels are readable numbers. */
export function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function Legend({ series }: { series: Series[] }) {
  return (
    <ul class="legend" aria-hidden="true">
      {series.map((s) => (
        <li>
          <span class={`swatch ${s.tone}`}></span>
          {s.label}
        </li>
      ))}
    </ul>
  );
}

/** The numbers behind a chart, one row per bucket (the text alternative a screen reader can walk). */
function DataTable({
  caption,
  buckets,
  series,
  firstColumn,
}: {
  caption: string;
  buckets: Bucket[];
  series: Series[];
  firstColumn: string;
}) {
  return (
    <details class="chart-data">
      <summary>{`Table: ${caption}`}</summary>
      <div class="table-wrap" tabindex={0} role="region" aria-label={`${caption} (table)`}>
        <table>
          <thead>
            <tr>
              <th scope="col">{firstColumn}</th>
              {series.map((s) => (
                <th scope="col">{s.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {buckets.map((b) => (
              <tr>
                <th scope="row">{b.label}</th>
                {series.map((s) => (
                  <td>{String(b.values[s.key] ?? 0)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

function Figure(props: { id: string; title: string; summary: string; children: Child }) {
  return (
    <figure class="chart" data-chart={props.id}>
      <figcaption>
        <strong>{props.title}</strong>
        <span class="muted" data-testid={`${props.id}-summary`}>{` ${props.summary}`}</span>
      </figcaption>
      {props.children}
    </figure>
  );
}

/**
 * Stacked columns, one per bucket (hours, runs): each column's segments are the series' values.
 * `line` draws a horizontal reference (a budget) and `marks` flags buckets (compaction) with a
 * triangle above their column.
 */
export function ColumnChart(props: {
  id: string;
  title: string;
  summary: string;
  buckets: Bucket[];
  series: Series[];
  firstColumn: string;
  line?: { value: number; label: string };
  marks?: { index: number; label: string }[];
}) {
  const { buckets, series, line, marks = [] } = props;
  if (buckets.length < MIN_BUCKETS || !buckets.some((b) => total(b) > 0))
    return (
      <Figure id={props.id} title={props.title} summary={props.summary}>
        <NotEnoughData id={props.id} />
      </Figure>
    );
  const max = niceMax(Math.max(line?.value ?? 0, ...buckets.map(total)));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, buckets.length);
  const barW = Math.max(2, Math.min(slot, plotW / MAX_BAR_SHARE) * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const labelEvery = Math.max(1, Math.ceil(buckets.length / 8));
  return (
    <Figure id={props.id} title={props.title} summary={props.summary}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${props.title}. ${props.summary}`}
        preserveAspectRatio="none"
        class="chart-svg"
      >
        {[0, max / 2, max].map((v) => (
          <g>
            <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(v)} y2={y(v)} />
            {Number.isInteger(v) ? (
              <text class="axis" x={PAD.left - 4} y={y(v) + 4} text-anchor="end">
                {v >= 1000 ? `${v / 1000}k` : String(v)}
              </text>
            ) : null}
          </g>
        ))}
        {buckets.map((b, i) => {
          let base = 0;
          const x = PAD.left + i * slot + (slot - barW) / 2;
          return (
            <g>
              {series.map((s) => {
                const v = b.values[s.key] ?? 0;
                if (v <= 0) return null;
                const rect = <rect class={s.tone} x={x} y={y(base + v)} width={barW} height={Math.max(1, y(base) - y(base + v))} />;
                base += v;
                return rect;
              })}
              {i % labelEvery === 0 ? (
                <text class="axis" x={x + barW / 2} y={HEIGHT - 6} text-anchor="middle">
                  {b.label}
                </text>
              ) : null}
            </g>
          );
        })}
        {line ? <line class="budget-line" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(line.value)} y2={y(line.value)} /> : null}
        {marks.map((m) => {
          const cx = PAD.left + m.index * slot + slot / 2;
          const top = y(total(buckets[m.index] ?? { label: "", values: {} })) - 4;
          return <path class="mark" d={`M${cx - 5},${top - 8} L${cx + 5},${top - 8} L${cx},${top} Z`} />;
        })}
      </svg>
      <Legend series={series} />
      {line ? (
        <p class="muted legend-note">{`Dashed line: ${line.label}.${marks.length ? " Triangles: runs where compaction ran." : ""}`}</p>
      ) : null}
      <DataTable caption={props.title} buckets={buckets} series={series} firstColumn={props.firstColumn} />
    </Figure>
  );
}

/** One horizontal bar split into segments (the fleet by state); the legend carries the counts. */
export function StackedBar(props: {
  id: string;
  title: string;
  summary: string;
  segments: { label: string; value: number; tone: string }[];
}) {
  const sum = props.segments.reduce((a, s) => a + s.value, 0);
  let x = 0;
  return (
    <Figure id={props.id} title={props.title} summary={props.summary}>
      {sum === 0 ? (
        <NotEnoughData id={props.id} />
      ) : (
        <svg viewBox="0 0 400 24" role="img" aria-label={`${props.title}. ${props.summary}`} preserveAspectRatio="none" class="stacked-svg">
          {props.segments.map((s) => {
            if (s.value <= 0) return null;
            const w = (s.value / sum) * 400;
            const rect = <rect class={s.tone} x={x} y={0} width={w} height={24} />;
            x += w;
            return rect;
          })}
        </svg>
      )}
      <ul class="legend">
        {props.segments
          .filter((s) => s.value > 0)
          .map((s) => (
            <li>
              <span class={`swatch ${s.tone}`} aria-hidden="true"></span>
              {`${s.label}: ${s.value}`}
            </li>
          ))}
      </ul>
    </Figure>
  );
}
