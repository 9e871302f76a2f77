/**
 * The dashboard's one stylesheet, served as a static route so pages need no build step and the
 * content security policy can forbid inline styles. Mobile first (no page scrolls sideways at 390 px: test/browser/roles-and-width.test.ts), colours
 * chosen for at least 4.5:1 contrast, and a visible focus ring on everything focusable.
 */
export const DASHBOARD_CSS = `
:root { --fg:#1b1f24; --muted:#4a5360; --bg:#ffffff; --panel:#f4f6f8; --line:#c9d1da; --link:#0b57d0;
  --ok:#0f6b2f; --ok-bg:#e3f4e8; --warn:#7a4b00; --warn-bg:#fff1d6; --bad:#a3161b; --bad-bg:#fde7e8;
  --info:#144d8c; --info-bg:#e4eefb; --focus:#ffbf47; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin:0; font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible, summary:focus-visible {
  outline:3px solid var(--focus); outline-offset:2px; box-shadow:0 0 0 5px var(--fg); }
.skip { position:absolute; left:-999px; top:0; background:var(--fg); color:#fff; padding:.5rem 1rem; z-index:10; }
.skip:focus { left:0; }
header.top { background:#14202e; color:#fff; padding:.5rem 1rem; }
header.top .brand { font-weight:700; margin-right:1rem; color:#fff; text-decoration:none; }
header.top nav ul { list-style:none; margin:.25rem 0 0; padding:0; display:flex; flex-wrap:wrap; gap:.25rem .75rem; }
header.top nav a { color:#fff; padding:.25rem 0; display:inline-block; }
header.top nav a[aria-current="page"] { font-weight:700; text-decoration-thickness:3px; }
header.top form { display:inline; }
header.top .agent-switcher { display:inline-flex; flex-wrap:wrap; gap:.5rem; align-items:center; margin:.25rem 0; }
header.top .agent-switcher label { display:inline; margin:0; color:#fff; }
header.top .signout, header.top .agent-switcher button { background:none; border:1px solid #fff; color:#fff; }
main { max-width:80rem; margin:0 auto; padding:1rem; }
h1 { font-size:1.5rem; margin:.5rem 0 1rem; } h2 { font-size:1.2rem; margin:1.5rem 0 .5rem; }
.banner { padding:.75rem 1rem; border-left:6px solid var(--warn); background:var(--warn-bg); color:var(--warn); margin-bottom:1rem; }
.notice { padding:.75rem 1rem; border-left:6px solid var(--info); background:var(--info-bg); color:var(--info); margin-bottom:1rem; }
.error { padding:.75rem 1rem; border-left:6px solid var(--bad); background:var(--bad-bg); color:var(--bad); margin-bottom:1rem; }
.panel { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:1rem; margin-bottom:1rem; }
.grid { display:grid; gap:1rem; grid-template-columns:1fr; }
@media (min-width:48rem) { .grid { grid-template-columns:1fr 1fr; } }
@media (min-width:64rem) { .charts { grid-template-columns:1fr 1fr; } }
/* Facts lists share one term column width, so consecutive lists on a page (the instance's facts, then its economics) line up. */
dl.facts { display:grid; grid-template-columns:10rem minmax(0,1fr); gap:.25rem 1rem; margin:0; align-items:baseline; }
dl.facts + dl.facts { margin-top:.25rem; }
@media (max-width:30rem) { dl.facts { grid-template-columns:7.5rem minmax(0,1fr); gap:.25rem .75rem; } }
dl.facts dt { color:var(--muted); overflow-wrap:anywhere; } dl.facts dd { margin:0; overflow-wrap:anywhere; min-width:0; }
.badge { display:inline-block; padding:0 .5rem; border-radius:999px; border:1px solid currentColor; font-size:.875rem; font-weight:600; white-space:nowrap; }
.badge.ok { color:var(--ok); background:var(--ok-bg); } .badge.warn { color:var(--warn); background:var(--warn-bg); }
.badge.bad { color:var(--bad); background:var(--bad-bg); } .badge.info { color:var(--info); background:var(--info-bg); }
.badge.neutral { color:var(--muted); background:#fff; }
ol.cards, ul.cards { list-style:none; padding:0; margin:0; display:grid; gap:.75rem; grid-template-columns:minmax(0,1fr); }
.card { border:1px solid var(--line); border-radius:6px; padding:.75rem 1rem; background:#fff; min-width:0; overflow-wrap:anywhere; }
.said { white-space:pre-wrap; overflow-wrap:anywhere; }
ul.activity li { overflow-wrap:anywhere; }
.card h3 { font-size:1rem; margin:0 0 .25rem; display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; }
.muted { color:var(--muted); }
meter { width:100%; height:1.25rem; }
button, .button { font:inherit; padding:.5rem 1rem; border-radius:6px; border:1px solid var(--fg); background:var(--fg); color:#fff; cursor:pointer; min-height:44px; text-decoration:none; display:inline-block; }
button.secondary, .button.secondary { background:#fff; color:var(--fg); }
button.danger { background:var(--bad); border-color:var(--bad); }
.actions { display:flex; flex-wrap:wrap; gap:.75rem; align-items:flex-start; }
.actions form { margin:0; }
label { display:block; font-weight:600; margin-bottom:.25rem; }
input[type=text], input[type=password], textarea { font:inherit; width:100%; padding:.5rem; border:1px solid var(--muted); border-radius:6px; }
textarea { min-height:5rem; }
.field { margin-bottom:.75rem; }
fieldset.field { border:1px solid var(--line); border-radius:6px; padding:.5rem 1rem; }
legend { font-weight:600; padding:0 .25rem; }
label.choice { font-weight:400; display:block; }
.hint { margin:0 0 .25rem; font-size:.875rem; }
pre { background:var(--panel); border:1px solid var(--line); padding:.5rem; overflow-x:auto; white-space:pre-wrap; overflow-wrap:anywhere; font-size:.875rem; }
.chat-item .said { white-space:pre-wrap; overflow-wrap:anywhere; }
ul.activity li { overflow-wrap:anywhere; }
.chat-item .reply { border-left:4px solid var(--info); padding-left:.75rem; margin-top:.5rem; white-space:pre-wrap; }
/* A wide table scrolls inside its own box, never the page: positioned, so the visually hidden
   text in its headers (position:absolute) is clipped with it instead of widening the document. */
.table-wrap { overflow-x:auto; position:relative; max-width:100%; }
table { border-collapse:collapse; width:100%; } th, td { text-align:left; padding:.35rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
.table-wrap:focus-visible { outline:3px solid var(--focus); }
table.runs td.outcome { min-width:14rem; }
th a { color:inherit; }
.nav-count { display:inline-block; margin-left:.3rem; min-width:1.4rem; padding:0 .4rem; border-radius:999px; background:var(--focus); color:#14202e; font-weight:700; text-align:center; font-size:.85rem; }
.live-status { font-size:.875rem; margin-top:-.5rem; }
.attention { border:2px solid var(--line); border-radius:6px; padding:.75rem 1rem; margin-bottom:1rem; background:#fff; }
.attention.needs { border-color:var(--bad); background:var(--bad-bg); }
.attention.clear { border-color:var(--ok); }
.attention-head { margin:0 0 .25rem; }
.attention-list { margin:0; padding-left:1.25rem; }
.attention-list li { margin:.2rem 0; }
.charts { display:grid; gap:1rem; grid-template-columns:1fr; }
figure.chart { margin:0; padding:.75rem; border:1px solid var(--line); border-radius:6px; background:#fff; min-width:0; }
figure.chart figcaption { margin-bottom:.5rem; }
.chart-svg { width:100%; height:10rem; display:block; }
.stacked-svg { width:100%; height:1.5rem; display:block; border-radius:4px; }
.chart-empty { margin:.5rem 0; padding:1.5rem 1rem; border:1px dashed var(--line); border-radius:4px; text-align:center; }
.chart-svg .grid { stroke:var(--line); stroke-width:1; }
.chart-svg .axis { font-size:11px; fill:var(--muted); }
.chart-svg .budget-line { stroke:var(--fg); stroke-width:2; stroke-dasharray:6 4; }
.chart-svg .mark { fill:var(--bad); }
.fill-ok { fill:#1a7f37; background:#1a7f37; } .fill-info { fill:#1f6feb; background:#1f6feb; }
.fill-warn { fill:#b35900; background:#b35900; } .fill-bad { fill:#cf222e; background:#cf222e; }
.fill-neutral { fill:#6e7781; background:#6e7781; }
ul.legend { list-style:none; padding:0; margin:.5rem 0 0; display:flex; flex-wrap:wrap; gap:.25rem 1rem; font-size:.875rem; }
.swatch { display:inline-block; width:.8rem; height:.8rem; margin-right:.35rem; border-radius:2px; vertical-align:middle; }
.legend-note { font-size:.875rem; margin:.25rem 0 0; }
details.chart-data summary { font-size:.875rem; cursor:pointer; }
.inline-form { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; margin:.5rem 0; }
.inline-form label { margin:0; }
select { font:inherit; padding:.4rem; border:1px solid var(--muted); border-radius:6px; background:#fff; min-height:44px; }
button.small { padding:.25rem .75rem; }
ol.history, ul.history { padding-left:1.25rem; }
ol.history li, ul.history li { margin:.2rem 0; overflow-wrap:anywhere; }
.session-divider { list-style:none; text-align:center; color:var(--info); border-top:2px dashed var(--info); padding-top:.5rem; font-weight:600; }
td.last-event { max-width:18rem; overflow-wrap:anywhere; }
pre.log { max-height:24rem; overflow:auto; }
.visually-hidden { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
/* Phones (issue #38): below 40rem the fleet and runs tables become one card per row, the facts
   that matter first on the first line (instance, state, $/h; run, status and outcome) and the rest
   wrapped under them or left to the instance's and run's own pages. Cells are placed by column
   position (the tables' column order is fixed in dashboard/fleet/fleet.tsx and runs-timeline.tsx). */
@media (max-width:40rem) {
  table.stack { display:block; } table.stack tbody { display:block; }
  table.stack thead { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); }
  table.stack tr { display:grid; gap:.15rem .75rem; align-items:baseline; border:1px solid var(--line); border-radius:6px; padding:.5rem .75rem; margin-bottom:.5rem; background:#fff; }
  table.stack th, table.stack td { display:block; padding:0; border:0; min-width:0; overflow-wrap:anywhere; }
  table.stack th[scope=row] { font-size:1.05rem; }
  table.fleet tr { grid-template-columns:minmax(0,1fr) auto auto; grid-template-areas:"id state price" "gpu gpu util" "label label label" "event event event" "sim sim sim"; }
  table.fleet th[scope=row] { grid-area:id; }
  table.fleet td:nth-child(2) { grid-area:label; } table.fleet td:nth-child(2)::before { content:"Label: "; color:var(--muted); }
  table.fleet td:nth-child(3) { grid-area:state; }
  table.fleet td:nth-child(4), table.fleet td:nth-child(5) { display:none; }
  table.fleet td:nth-child(6) { grid-area:gpu; }
  table.fleet td:nth-child(7) { grid-area:price; font-weight:700; white-space:nowrap; }
  table.fleet td:nth-child(8) { grid-area:util; text-align:right; } table.fleet td:nth-child(8)::before { content:"util. "; color:var(--muted); }
  table.fleet td:nth-child(9) { grid-area:event; font-size:.875rem; color:var(--muted); max-width:none; }
  table.fleet td:nth-child(10) { grid-area:sim; }
  table.runs tr { grid-template-columns:auto minmax(0,1fr); grid-template-areas:"run started" "outcome outcome" "why why"; }
  table.runs th[scope=row] { grid-area:run; }
  table.runs td:nth-child(2) { grid-area:started; text-align:right; color:var(--muted); }
  table.runs td.outcome { grid-area:outcome; min-width:0; }
  table.runs td:nth-child(3) { grid-area:why; font-size:.875rem; color:var(--muted); }
  table.runs td:nth-child(3)::before { content:"Triggers: "; }
  table.runs td:nth-child(4), table.runs td:nth-child(6), table.runs td:nth-child(7) { display:none; }
  /* Buttons an on-call thumb must reach: full width, at least 44 px tall. */
  .thumb .actions, .thumb.actions, .thumb.inline-form { flex-direction:column; align-items:stretch; }
  .thumb button, .thumb select { width:100%; min-height:44px; }
  .card form.decide { position:sticky; bottom:0; background:#fff; padding:.5rem 0; }
}
/* What to do next on a fresh or simulated install (dashboard/overview/first-steps.tsx). */
.first-steps { border:2px solid var(--info); border-radius:6px; padding:.75rem 1rem; margin-bottom:1rem; background:var(--info-bg); }
.first-steps h2 { margin-top:0; }
.first-steps ol { margin:0; padding-left:1.25rem; } .first-steps li { margin:.35rem 0; overflow-wrap:anywhere; }
`;
