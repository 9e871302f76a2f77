/**
 * The dashboard's one stylesheet, served as a static route so pages need no build step and the
 * content security policy can forbid inline styles. Mobile first (works at 375 px), colours
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
header.top .signout { background:none; border:1px solid #fff; color:#fff; }
main { max-width:64rem; margin:0 auto; padding:1rem; }
h1 { font-size:1.5rem; margin:.5rem 0 1rem; } h2 { font-size:1.2rem; margin:1.5rem 0 .5rem; }
.banner { padding:.75rem 1rem; border-left:6px solid var(--warn); background:var(--warn-bg); color:var(--warn); margin-bottom:1rem; }
.notice { padding:.75rem 1rem; border-left:6px solid var(--info); background:var(--info-bg); color:var(--info); margin-bottom:1rem; }
.error { padding:.75rem 1rem; border-left:6px solid var(--bad); background:var(--bad-bg); color:var(--bad); margin-bottom:1rem; }
.panel { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:1rem; margin-bottom:1rem; }
.grid { display:grid; gap:1rem; grid-template-columns:1fr; }
@media (min-width:48rem) { .grid { grid-template-columns:1fr 1fr; } }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.25rem 1rem; margin:0; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; overflow-wrap:anywhere; }
.badge { display:inline-block; padding:0 .5rem; border-radius:999px; border:1px solid currentColor; font-size:.875rem; font-weight:600; white-space:nowrap; }
.badge.ok { color:var(--ok); background:var(--ok-bg); } .badge.warn { color:var(--warn); background:var(--warn-bg); }
.badge.bad { color:var(--bad); background:var(--bad-bg); } .badge.info { color:var(--info); background:var(--info-bg); }
.badge.neutral { color:var(--muted); background:#fff; }
ol.cards, ul.cards { list-style:none; padding:0; margin:0; display:grid; gap:.75rem; }
.card { border:1px solid var(--line); border-radius:6px; padding:.75rem 1rem; background:#fff; }
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
pre { background:var(--panel); border:1px solid var(--line); padding:.5rem; overflow-x:auto; white-space:pre-wrap; overflow-wrap:anywhere; font-size:.875rem; }
.chat-item .said { white-space:pre-wrap; overflow-wrap:anywhere; }
.chat-item .reply { border-left:4px solid var(--info); padding-left:.75rem; margin-top:.5rem; white-space:pre-wrap; }
.table-wrap { overflow-x:auto; }
table { border-collapse:collapse; width:100%; } th, td { text-align:left; padding:.35rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
.visually-hidden { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
`;
