/**
 * Preloaded into a benchmarked host (`NODE_OPTIONS=--import ./bench/host-profile.mjs`, which
 * bench/busy.bench.ts sets when BUSY_CPU_PROF=<dir>): records a CPU profile and the event loop's
 * delay (perf_hooks.monitorEventLoopDelay) from start until SIGTERM, then writes
 * <dir>/host-<pid>.cpuprofile (open in Chrome DevTools) and <dir>/host-<pid>.loop.json.
 * A bench tool only; `--cpu-prof` itself is not allowed in NODE_OPTIONS.
 */
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const dir = process.env.BUSY_CPU_PROF;
const session = new Session();
session.connect();
session.post("Profiler.enable");
session.post("Profiler.setSamplingInterval", { interval: 1000 });
session.post("Profiler.start");
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();

process.once("SIGTERM", () => {
  loop.disable();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  const delay = { meanMs: ms(loop.mean), p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max) };
  writeFileSync(`${dir}/host-${process.pid}.loop.json`, JSON.stringify(delay));
  session.post("Profiler.stop", (err, result) => {
    if (!err) writeFileSync(`${dir}/host-${process.pid}.cpuprofile`, JSON.stringify(result.profile));
  });
});
