/**
 * The dashboard's only JavaScript, served as a static route (no build step, no inline script, so
 * the content security policy can forbid inline code). Progressive: every page works without it.
 *
 * - Live updates: regions marked `data-live="<part>"` (every page has some: at least the
 *   navigation's counts) are re-rendered by the server; the script polls
 *   `/live?parts=…&page=<this page's path and query>&agent=<the page's agent>` every 2 s while the agent is busy (running,
 *   a run scheduled or events waiting) and every 10 s otherwise, pauses while the tab is hidden,
 *   and swaps a region's HTML only when it changed and the operator is not working in it (focus
 *   inside, e.g. typing an approval note). Bounded: one request in flight, then one timer.
 * - Freshness: the status line says when the view last updated; when the server stops answering
 *   an alert says since when the view is stale, and it clears on the next answer.
 * - Confirmations: a form with `data-confirm` asks first; when accepted it sets its hidden
 *   `confirmed` field, so the server acts at once instead of showing its confirmation page.
 */
export const DASHBOARD_JS = `
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute || !form.hasAttribute("data-confirm")) return;
    if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); return; }
    var field = form.querySelector("input[name=confirmed]");
    if (field) field.value = "yes";
  });

  var regions = Array.prototype.slice.call(document.querySelectorAll("[data-live]"));
  if (!regions.length) return;
  var parts = regions.map(function (r) { return r.getAttribute("data-live"); }).join(",");
  var last = {};
  regions.forEach(function (r) { last[r.getAttribute("data-live")] = r.innerHTML; });
  var timer = null;
  var indicator = document.querySelector("[data-live-indicator]");
  var lost = document.querySelector("[data-live-lost]");
  var updatedAt = null;

  function clock(iso) { return iso.slice(11, 19) + " UTC"; }
  function schedule(ms) { clearTimeout(timer); timer = setTimeout(poll, ms); }
  function busy(region) { return region.contains(document.activeElement) && document.activeElement !== region; }

  function poll() {
    if (document.hidden) return;
    var page = window.location.pathname + window.location.search;
    var agent = new URLSearchParams(window.location.search).get("agent");
    fetch("/live?parts=" + encodeURIComponent(parts) + "&page=" + encodeURIComponent(page) + (agent ? "&agent=" + encodeURIComponent(agent) : ""), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (res) {
        if (res.status === 401) { window.location.href = "/sign-in?next=" + encodeURIComponent(page); return null; }
        if (!res.ok) throw new Error("HTTP " + res.status);
        return res.json();
      })
      .then(function (data) {
        if (!data) return;
        regions.forEach(function (region) {
          var name = region.getAttribute("data-live");
          var html = data.html[name];
          if (typeof html === "string" && html !== last[name] && !busy(region)) { region.innerHTML = html; last[name] = html; }
        });
        updatedAt = data.at;
        document.body.setAttribute("data-connection", "live");
        if (lost) { lost.hidden = true; lost.textContent = ""; }
        if (indicator) indicator.textContent = "Live: updated at " + clock(data.at) + (data.active ? ", every 2 seconds while the agent is busy." : ", every 10 seconds.");
        schedule(data.active ? 2000 : 10000);
      })
      .catch(function () {
        document.body.setAttribute("data-connection", "lost");
        if (lost) {
          lost.textContent = "Connection lost: the server did not answer. " + (updatedAt ? "This view is from " + clock(updatedAt) + "." : "This view may be stale.") + " Retrying every 10 seconds.";
          lost.hidden = false;
        }
        schedule(10000);
      });
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
  schedule(document.body.hasAttribute("data-busy") ? 1000 : 2000);
})();
`;
