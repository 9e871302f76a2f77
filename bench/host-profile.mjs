/**
 * Preloaded into a benchmarked host (`NODE_OPTIONS=--import ./bench/host-profile.mjs`, which
 * bench/busy.bench.ts sets when BUSY_CPU_PROF=<dir>): records a CPU profile and the event loop's
 * delay (perf_hooks.monitorEventLoopDelay) from start until SIGTERM, and every stall of the loop
 * over 50 ms (a 10 ms timer firing late, with its end on the profile's clock), then writes
 * <dir>/host-<pid>.cpuprofile (open in Chrome DevTools) and <dir>/host-<pid>.loop.json;
 * bench/stalls.mjs names what ran during each stall.
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

// V8's profile timestamps are microseconds on the monotonic clock hrtime reads.
const micros = () => Number(process.hrtime.bigint() / 1000n);
const stalls = [];
let last = micros();
const probe = setInterval(() => {
  const now = micros();
  if (now - last > 60_000 && stalls.length < 10_000) stalls.push({ endUs: now, ms: Math.round((now - last) / 1000) - 10 });
  last = now;
}, 10);
probe.unref();

process.once("SIGTERM", () => {
  loop.disable();
  clearInterval(probe);
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  const delay = { meanMs: ms(loop.mean), p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max), stalls };
  writeFileSync(`${dir}/host-${process.pid}.loop.json`, JSON.stringify(delay));
  session.post("Profiler.stop", (err, result) => {
    if (!err) writeFileSync(`${dir}/host-${process.pid}.cpuprofile`, JSON.stringify(result.profile));
  });
});
