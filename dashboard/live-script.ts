/**
 * The dashboard's only JavaScript, served as a static route (no build step, no inline script, so
 * the content security policy can forbid inline code). Progressive: every page works without it.
 *
 * - Live updates: regions marked `data-live="<part>"` are re-rendered by the server; the script
 *   polls `/live?parts=…` every 2 s while the agent is busy (running, a run scheduled or events
 *   waiting) and every 10 s otherwise, pauses while the tab is hidden, and swaps a region's HTML
 *   only when it changed.
 * - Confirmations: a form with `data-confirm` asks first; when accepted it sets its hidden
 *   `confirmed` field, so the server acts at once instead of showing its confirmation page.
 */
export const DASHBOARD_JS = `
(function () {
  "use strict";
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); return; }
      var field = form.querySelector("input[name=confirmed]");
      if (field) field.value = "yes";
    });
  });

  var regions = Array.prototype.slice.call(document.querySelectorAll("[data-live]"));
  if (!regions.length) return;
  var parts = regions.map(function (r) { return r.getAttribute("data-live"); }).join(",");
  var last = {};
  regions.forEach(function (r) { last[r.getAttribute("data-live")] = r.innerHTML; });
  var timer = null;
  var indicator = document.querySelector("[data-live-indicator]");

  function schedule(ms) { clearTimeout(timer); timer = setTimeout(poll, ms); }

  function poll() {
    if (document.hidden) return;
    fetch("/live?parts=" + encodeURIComponent(parts), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (res) {
        if (res.status === 401) { window.location.href = "/sign-in?next=" + encodeURIComponent(window.location.pathname); return null; }
        if (!res.ok) throw new Error("HTTP " + res.status);
        return res.json();
      })
      .then(function (data) {
        if (!data) return;
        regions.forEach(function (region) {
          var name = region.getAttribute("data-live");
          var html = data.html[name];
          if (typeof html === "string" && html !== last[name]) { region.innerHTML = html; last[name] = html; }
        });
        if (indicator) indicator.textContent = data.active ? "Live: updating every 2 seconds while the agent is busy." : "Live: checking every 10 seconds.";
        schedule(data.active ? 2000 : 10000);
      })
      .catch(function () {
        if (indicator) indicator.textContent = "Live updates paused: the server did not answer. Retrying.";
        schedule(10000);
      });
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) schedule(0); });
  schedule(document.body.hasAttribute("data-busy") ? 1000 : 2000);
})();
`;
